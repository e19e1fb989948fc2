// Search as you type: ranked results with highlighted snippets, folder and tag filters,
// and the search modes the server offers (keyword, semantic, hybrid) with a minimum
// score. The page says which mode ran, and why when it fell back to keyword; a hit found
// by meaning names the passage it matched and opens the note there (?at=offset).
// Arrow keys move through the results, Enter opens one.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiError, describe, get } from "../lib/api";
import { capabilities } from "../lib/capabilities";
import { href, navigate, route, setQuery } from "../lib/router";
import { useStore } from "../lib/store";
import type { SearchHit, SearchOut } from "../lib/types";
import { ago } from "../ui/format";
import { Snippet } from "../ui/snippet";
import { loadVault, vault } from "../vault/index";
import { folderOf } from "../vault/keys";

const DEBOUNCE_MS = 140;

/** Where a hit opens: the note, at the passage a semantic or hybrid search matched. */
function hitTarget(hit: SearchHit): string {
  return hit.chunk ? `vault/${hit.path}?at=${hit.chunk.offset}` : `vault/${hit.path}`;
}

export function SearchPage() {
  const current = useStore(route);
  const index = useStore(vault);
  const [q, setQ] = useState(current.query.get("q") ?? "");
  const [folder, setFolder] = useState(current.query.get("folder") ?? "");
  const [tag, setTag] = useState(current.query.get("tag") ?? "");
  const [mode, setMode] = useState(current.query.get("mode") ?? "");
  const [modes, setModes] = useState<string[]>([]);
  const [minScore, setMinScore] = useState(current.query.get("min_score") ?? "");
  const [hasMinScore, setHasMinScore] = useState(false);
  const [ran, setRan] = useState<{ mode: string | null; fallback: string | null }>({ mode: null, fallback: null });
  const [tags, setTags] = useState<string[]>([]);
  const [results, setResults] = useState<SearchHit[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLOListElement>(null);

  useEffect(() => {
    input.current?.focus();
    if (!index.complete && !index.loading) void loadVault();
    get<Record<string, number>>("/v1/tags").then((t) => setTags(Object.keys(t).sort()), () => undefined);
    void capabilities().then((caps) => {
      setModes(caps.parameter("/v1/search", "mode").values);
      setHasMinScore(caps.parameter("/v1/search", "min_score").present);
    });
  }, []);

  const folders = useMemo(() => {
    const set = new Set<string>();
    for (const n of index.notes.values()) {
      let f = folderOf(n.path);
      while (f) {
        set.add(f);
        f = folderOf(f);
      }
    }
    return [...set].sort();
  }, [index.revision]);

  // One request in flight: a newer query aborts the older one, so results never arrive
  // out of order. A tag alone lists that tag's notes (no words to rank by).
  useEffect(() => {
    setQuery({ q, folder, tag, mode, min_score: minScore });
    const words = q.trim();
    if (!words && !tag) {
      setResults(null);
      setError(null);
      return undefined;
    }
    const abort = new AbortController();
    const timer = window.setTimeout(async () => {
      setBusy(true);
      try {
        if (words) {
          const out = await get<SearchOut>("/v1/search", {
            query: { q: words, folder, tag, limit: 50, mode: mode || undefined, min_score: minScore.trim() || undefined },
            signal: abort.signal,
          });
          setResults(out.results);
          setRan({ mode: out.mode ?? null, fallback: out.fallback ?? null });
        } else {
          const out = await get<{ notes: SearchHit[] }>("/v1/notes", { query: { tag, folder, limit: 100 }, signal: abort.signal });
          setResults(out.notes.map((n) => ({ ...n, score: 0, snippet: "" })));
          setRan({ mode: null, fallback: null });
        }
        setError(null);
        setActive(0);
      } catch (err) {
        if (err instanceof DOMException && err.name === "AbortError") return;
        setError(err instanceof ApiError && err.status === 429 ? `Search budget used up: ${describe(err)}` : describe(err));
      } finally {
        if (!abort.signal.aborted) setBusy(false);
      }
    }, DEBOUNCE_MS);
    return () => {
      window.clearTimeout(timer);
      abort.abort();
    };
  }, [q, folder, tag, mode, minScore]);

  const onKey = (event: KeyboardEvent) => {
    if (!results?.length) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = Math.max(0, Math.min(results.length - 1, active + (event.key === "ArrowDown" ? 1 : -1)));
      setActive(next);
      list.current?.children[next]?.scrollIntoView({ block: "nearest" });
    } else if (event.key === "Enter") {
      const hit = results[active];
      if (hit) {
        event.preventDefault();
        navigate(hitTarget(hit));
      }
    }
  };

  return (
    <section class="search-page" aria-labelledby="search-h">
      <h1 id="search-h">Search</h1>
      <form class="search-form" role="search" onSubmit={(e) => e.preventDefault()}>
        <label class="field grow">
          <span>Words</span>
          <input
            ref={input}
            type="search"
            value={q}
            onInput={(e) => setQ((e.target as HTMLInputElement).value)}
            onKeyDown={onKey}
            placeholder="Search titles, paths, tags and text…"
            aria-controls="search-results"
            autoComplete="off"
          />
        </label>
        <label class="field">
          <span>Folder</span>
          <select value={folder} onChange={(e) => setFolder((e.target as HTMLSelectElement).value)}>
            <option value="">Everywhere</option>
            {folders.map((f) => (
              <option key={f} value={f}>
                {f}/
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span>Tag</span>
          <select value={tag} onChange={(e) => setTag((e.target as HTMLSelectElement).value)}>
            <option value="">Any tag</option>
            {tags.map((t) => (
              <option key={t} value={t}>
                #{t}
              </option>
            ))}
          </select>
        </label>
        <div class="field">
          <span id="search-mode-label">Mode</span>
          <select aria-labelledby="search-mode-label" value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value)} disabled={modes.length === 0} title={modes.length ? "" : "This server offers keyword search only"}>
            <option value="">{modes.length === 0 ? "Keyword" : "Server default"}</option>
            {modes.map((m) => (
              <option key={m} value={m}>
                {m[0]?.toUpperCase()}
                {m.slice(1)}
              </option>
            ))}
          </select>
        </div>
        {hasMinScore && (
          <label class="field min-score">
            <span>Min score</span>
            <input
              type="number"
              min={0}
              max={1}
              step={0.05}
              value={minScore}
              placeholder="default"
              onInput={(e) => setMinScore((e.target as HTMLInputElement).value)}
              title="Drop hits scoring below this (0 to 1); empty: the server's default (0.4 for semantic and hybrid)"
            />
          </label>
        )}
      </form>
      <div class="search-status" role="status" aria-live="polite">
        {busy
          ? "Searching…"
          : error
            ? ""
            : results
              ? `${results.length} result${results.length === 1 ? "" : "s"}${ran.mode ? ` · ${ran.mode} search` : ""}`
              : ""}
      </div>
      {ran.fallback && !busy && (
        <p class="notice search-fallback" role="note">
          Searched by keyword instead: {ran.fallback}
        </p>
      )}
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      {results && results.length === 0 && !busy && <p class="muted">Nothing matches. Try fewer words, or another folder or tag.</p>}
      {results && results.length > 0 && (
        <ol class="results" id="search-results" ref={list}>
          {results.map((hit, i) => (
            <li key={hit.path} class={i === active ? "active" : ""}>
              <a href={href(hitTarget(hit))} class="result-title">
                {hit.title}
              </a>
              <div class="result-meta">
                <span>{hit.path}</span>
                {hit.tags.slice(0, 6).map((t) => (
                  <span key={t} class="tag">
                    #{t}
                  </span>
                ))}
                <span class="muted">{ago(hit.updated_at)}</span>
                {hit.score > 0 && <span class="muted score">score {hit.score.toFixed(2)}</span>}
                {hit.chunk && (
                  <a class="matched" href={href(hitTarget(hit))}>
                    matched {hit.chunk.heading ? `under “${hit.chunk.heading}”` : "at the top"}
                  </a>
                )}
              </div>
              {hit.snippet && (
                <p class="result-snippet">
                  <Snippet html={hit.snippet} />
                </p>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
