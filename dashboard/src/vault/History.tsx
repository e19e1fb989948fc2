// A note's kept versions (the last 50): pick any two to see a line diff between them,
// and restore any one (a restore is itself a new version, so nothing is lost).
import { useEffect, useMemo, useState } from "preact/hooks";
import { describe, get, notePath, call } from "../lib/api";
import type { Version, VersionDetail, WriteOut } from "../lib/types";
import { Dialog } from "../ui/dialog";
import { bytes, when } from "../ui/format";
import { toast } from "../ui/toast";
import type { DiffLine } from "./merge";

export function History(props: {
  path: string;
  currentVersion: number;
  dirty: boolean;
  onClose: () => void;
  onRestored: () => void;
}) {
  const [versions, setVersions] = useState<Version[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);
  const [texts, setTexts] = useState<Map<number, string>>(new Map());
  const [diff, setDiff] = useState<DiffLine[] | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    get<Version[]>(`/v1/notes/${notePath(props.path)}/versions`).then(
      (list) => {
        const sorted = [...list].sort((a, b) => b.version - a.version);
        setVersions(sorted);
        setTo(sorted[0]?.version ?? null);
        setFrom(sorted[1]?.version ?? sorted[0]?.version ?? null);
      },
      (err: unknown) => setError(describe(err)),
    );
  }, [props.path]);

  useEffect(() => {
    if (from === null || to === null) return;
    let live = true;
    const need = [from, to].filter((v) => !texts.has(v));
    Promise.all(need.map((v) => get<VersionDetail>(`/v1/notes/${notePath(props.path)}/versions/${v}`)))
      .then(async (details) => {
        const next = new Map(texts);
        for (const d of details) next.set(d.version, d.markdown);
        const { lineDiff } = await import("./merge");
        if (!live) return;
        if (need.length) setTexts(next);
        setDiff(lineDiff(next.get(from) ?? "", next.get(to) ?? ""));
      })
      .catch((err: unknown) => setError(describe(err)));
    return () => {
      live = false;
    };
  }, [from, to]);

  const stats = useMemo(() => {
    if (!diff) return null;
    return { added: diff.filter((d) => d.kind === "added").length, removed: diff.filter((d) => d.kind === "removed").length };
  }, [diff]);

  async function restore(version: number): Promise<void> {
    setBusy(true);
    try {
      const out = await call<WriteOut>("POST", `/v1/notes/${notePath(props.path)}/versions/${version}/restore`, {
        headers: { "If-Match": `"${props.currentVersion}"` },
      });
      toast(out.data.message, "success");
      props.onRestored();
    } catch (err) {
      toast(`Not restored: ${describe(err)}`, "error");
    } finally {
      setBusy(false);
    }
  }

  return (
    <Dialog open title={`History of ${props.path}`} onClose={props.onClose} wide>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      {!versions && !error && <p class="muted">Loading versions…</p>}
      {versions && (
        <div class="history">
          <table class="versions">
            <caption class="sr-only">Kept versions; choose two to compare</caption>
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Saved</th>
                <th scope="col">Size</th>
                <th scope="col">From</th>
                <th scope="col">To</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <tr key={v.version} class={v.version === to || v.version === from ? "chosen" : ""}>
                  <td>
                    v{v.version}
                    {v.version === props.currentVersion && <span class="badge">current</span>}
                  </td>
                  <td>{when(v.created_at)}</td>
                  <td>{bytes(v.size)}</td>
                  <td>
                    <input type="radio" name="diff-from" aria-label={`Compare from version ${v.version}`} checked={from === v.version} onChange={() => setFrom(v.version)} />
                  </td>
                  <td>
                    <input type="radio" name="diff-to" aria-label={`Compare to version ${v.version}`} checked={to === v.version} onChange={() => setTo(v.version)} />
                  </td>
                  <td>
                    {v.version !== props.currentVersion && (
                      <button type="button" class="small" disabled={busy} onClick={() => void restore(v.version)} aria-label={`Restore version ${v.version}`}>
                        Restore
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="diff-pane">
            <h3>
              v{from} → v{to}{" "}
              {stats && (
                <span class="muted">
                  <span class="added-text">+{stats.added}</span> <span class="removed-text">−{stats.removed}</span> lines
                </span>
              )}
            </h3>
            {props.dirty && <p class="notice">Your unsaved edit is not part of this history; restoring replaces it.</p>}
            <div class="diff" role="region" aria-label="Differences" tabIndex={0}>
              {diff === null ? (
                <p class="muted">Loading…</p>
              ) : diff.every((d) => d.kind === "same") ? (
                <p class="muted">These versions are identical.</p>
              ) : (
                diff.map((d, i) => (
                  <div key={i} class={`diff-line ${d.kind}`}>
                    <span class="ln" aria-hidden="true">{d.oldNo ?? ""}</span>
                    <span class="ln" aria-hidden="true">{d.newNo ?? ""}</span>
                    <span class="sign">{d.kind === "added" ? "+" : d.kind === "removed" ? "−" : " "}</span>
                    <span class="text">{d.text || " "}</span>
                  </div>
                ))
              )}
            </div>
          </div>
        </div>
      )}
    </Dialog>
  );
}
