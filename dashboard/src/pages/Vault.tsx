// The vault: the folder tree (with a filter), tags and recent notes on the left; the open
// note, or an overview, on the right.
import { useEffect, useMemo, useState } from "preact/hooks";
import { get } from "../lib/api";
import { href, navigate } from "../lib/router";
import { useStore } from "../lib/store";
import type { NoteSummary } from "../lib/types";
import { Dialog } from "../ui/dialog";
import { ago, count } from "../ui/format";
import { drafts } from "../vault/drafts";
import { loadVault, vault } from "../vault/index";
import { fold, folderOf, stem } from "../vault/keys";
import { isNotePath, loadFiles, vaultFiles } from "../vault/files";
import { FileView, UploadDialog } from "../vault/FileView";
import { NoteView } from "../vault/NoteView";
import { buildTree, fileRow, flatten, Tree, type Row } from "../vault/Tree";

const EXPANDED_KEY = "memvault.expanded";

function savedExpanded(): Set<string> {
  try {
    return new Set(JSON.parse(localStorage.getItem(EXPANDED_KEY) ?? "[]") as string[]);
  } catch {
    return new Set();
  }
}

let recentCache: NoteSummary[] | null = null;
let tagsCache: Record<string, number> | null = null;

export function VaultPage(props: { notePath: string | null }) {
  const index = useStore(vault);
  const attachments = useStore(vaultFiles);
  const pending = useStore(drafts);
  const [expanded, setExpanded] = useState<Set<string>>(savedExpanded);
  const [filter, setFilter] = useState("");
  const [creating, setCreating] = useState(false);
  const [uploading, setUploading] = useState(false);
  const [dropped, setDropped] = useState<File[] | undefined>(undefined);
  const [recent, setRecent] = useState<NoteSummary[] | null>(recentCache);
  const [tags, setTags] = useState<Record<string, number> | null>(tagsCache);

  useEffect(() => {
    if (!index.complete && !index.loading) void loadVault();
    if (!attachments.complete && !attachments.loading) void loadFiles();
  }, []);
  const loaded = index.revision > 0 && index.complete;
  useEffect(() => {
    get<NoteSummary[]>("/v1/recent", { query: { limit: 8 } }).then((r) => setRecent((recentCache = r)), () => undefined);
  }, [loaded]);
  // The tags once the index is in (or failed): counting a large vault's tags keeps the
  // server busy for a while, which a note opened right after a page load should not wait
  // behind (and a count asked before the index is in was asked again once it was).
  useEffect(() => {
    if (!loaded && !index.error) return;
    get<Record<string, number>>("/v1/tags").then((t) => setTags((tagsCache = t)), () => undefined);
  }, [loaded, index.error !== null]);

  // Open the folders above the open note.
  useEffect(() => {
    if (!props.notePath) return;
    const parts = folderOf(props.notePath).split("/").filter(Boolean);
    if (parts.length === 0) return;
    setExpanded((old) => {
      const next = new Set(old);
      let path = "";
      for (const p of parts) {
        path = path ? `${path}/${p}` : p;
        next.add(fold(path));
      }
      return next.size === old.size ? old : next;
    });
  }, [props.notePath]);

  useEffect(() => {
    localStorage.setItem(EXPANDED_KEY, JSON.stringify([...expanded].slice(0, 2000)));
  }, [expanded]);

  const tree = useMemo(() => buildTree(index.notes.values(), attachments.files.values()), [index.revision, attachments.revision]);
  const rows: Row[] = useMemo(() => {
    const q = fold(filter.trim());
    if (!q) return flatten(tree, expanded);
    const out: Row[] = [];
    for (const n of index.notes.values()) {
      if (fold(n.path).includes(q) || fold(n.title).includes(q)) out.push({ kind: "note", path: n.path, label: stem(n.path), depth: 0 });
      if (out.length >= 5000) break;
    }
    for (const f of attachments.files.values()) {
      if (out.length >= 5000) break;
      if (fold(f.path).includes(q)) out.push(fileRow(f.path, 0));
    }
    return out.sort((a, b) => a.label.localeCompare(b.label));
  }, [tree, expanded, filter, index.revision, attachments.revision]);

  const toggle = (folder: string, open?: boolean) =>
    setExpanded((old) => {
      const key = fold(folder);
      const next = new Set(old);
      if (open ?? !next.has(key)) next.add(key);
      else next.delete(key);
      return next;
    });

  const dirtyKeys = useMemo(() => new Set(pending.keys()), [pending]);
  const topTags = useMemo(
    () => Object.entries(tags ?? {}).sort((a, b) => b[1] - a[1]).slice(0, 24),
    [tags],
  );

  return (
    <div class="vault">
      <aside
        class="vault-side"
        aria-label="Vault navigation"
        onDragOver={(e) => {
          if (e.dataTransfer?.types.includes("Files")) e.preventDefault();
        }}
        onDrop={(e) => {
          const files = [...(e.dataTransfer?.files ?? [])];
          if (files.length === 0) return;
          e.preventDefault();
          setDropped(files);
          setUploading(true);
        }}
      >
        <div class="side-head">
          <h2 class="side-title">
            Notes <span class="count">{count(index.notes.size)}</span>
          </h2>
          <div class="side-actions">
            <button
              type="button"
              class="small"
              onClick={() => {
                setDropped(undefined);
                setUploading(true);
              }}
              title="Upload files into a folder (or drop them here)"
            >
              Upload
            </button>
            <button type="button" class="primary small" onClick={() => setCreating(true)} title="New note (Alt+N)">
              New note
            </button>
          </div>
        </div>
        <label class="sr-only" for="tree-filter">
          Filter notes by name
        </label>
        <input
          id="tree-filter"
          class="tree-filter"
          type="search"
          placeholder="Filter by name…"
          value={filter}
          onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
        />
        {index.loading && <p class="muted small-text">Loading notes… {count(index.notes.size)}</p>}
        {index.error && (
          <p class="error-text small-text" role="alert">
            {index.error}
          </p>
        )}
        <Tree rows={rows} current={props.notePath} dirty={dirtyKeys} label="Notes and files by folder" onToggle={toggle} />
        {topTags.length > 0 && (
          <details class="side-section" open>
            <summary>Tags</summary>
            <ul class="tag-list">
              {topTags.map(([tag, n]) => (
                <li key={tag}>
                  <a class="tag" href={href(`search?tag=${encodeURIComponent(tag)}`)}>
                    #{tag} <span class="count">{n}</span>
                  </a>
                </li>
              ))}
            </ul>
          </details>
        )}
      </aside>
      <div class="vault-main">
        {props.notePath && !isNotePath(props.notePath) ? (
          <FileView
            key="file"
            path={props.notePath}
            onUpload={() => {
              setDropped(undefined);
              setUploading(true);
            }}
          />
        ) : props.notePath ? (
          <NoteView key="note" path={props.notePath} />
        ) : (
          <section class="vault-home" aria-labelledby="vault-home-h">
            <h1 id="vault-home-h">Vault</h1>
            <p class="lede">
              {count(index.notes.size)} notes{attachments.files.size > 0 ? ` and ${count(attachments.files.size)} files` : ""}
              {index.loading ? " so far" : ""}. Pick one in the tree, search with <kbd>/</kbd>, or start a new one.
            </p>
            <h2>Recently changed</h2>
            {recent === null ? (
              <p class="muted">Loading…</p>
            ) : recent.length === 0 ? (
              <p class="muted">The vault is empty. Create a note, or import an Obsidian vault.</p>
            ) : (
              <ul class="recent-list">
                {recent.map((n) => (
                  <li key={n.path}>
                    <a href={href(`vault/${n.path}`)}>{n.title}</a>
                    <span class="muted"> {n.path} · {ago(n.updated_at)}</span>
                  </li>
                ))}
              </ul>
            )}
          </section>
        )}
      </div>
      <UploadDialog
        open={uploading}
        folder={props.notePath ? folderOf(props.notePath) : ""}
        dropped={dropped}
        onClose={() => setUploading(false)}
        onDone={(paths) => {
          setUploading(false);
          if (paths.length === 1 && paths[0]) navigate(`vault/${paths[0]}`);
        }}
      />
      <NewNoteDialog open={creating} folder={props.notePath ? folderOf(props.notePath) : ""} onClose={() => setCreating(false)} />
    </div>
  );
}

function NewNoteDialog(props: { open: boolean; folder: string; onClose: () => void }) {
  const [path, setPath] = useState("");
  useEffect(() => setPath(props.folder ? `${props.folder}/` : ""), [props.open]);
  return (
    <Dialog open={props.open} title="New note" onClose={props.onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const clean = path.trim().replace(/^\/+/, "");
          if (!clean) return;
          props.onClose();
          navigate(`vault/${clean.endsWith(".md") ? clean : `${clean}.md`}`);
        }}
      >
        <label class="field">
          <span>Path</span>
          <input value={path} onInput={(e) => setPath((e.target as HTMLInputElement).value)} placeholder="projects/Launch plan" required autoFocus spellcheck={false} />
        </label>
        <p class="muted">The note is created when you first save it.</p>
        <div class="dialog-actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="primary">
            Create
          </button>
        </div>
      </form>
    </Dialog>
  );
}
