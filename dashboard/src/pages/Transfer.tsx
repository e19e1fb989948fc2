// Import an Obsidian vault (a zip) with a progress bar, and export the vault as one.
// The import is all or nothing: a refused archive leaves the vault as it was, and the
// refusal is shown in full (which file, which limit).
//
// Today this speaks to POST /v1/import (the archive in the request, progress streamed
// back as NDJSON) and GET /v1/export (a plain download, so a large vault streams to
// disk rather than through the page's memory). The import/export job API (presigned S3
// upload and download) will slot in behind `startImport` and `exportHref`.
import { useRef, useState } from "preact/hooks";
import { csrf, url } from "../lib/api";
import type { ImportResult } from "../lib/types";
import { bytes, count } from "../ui/format";
import { loadVault } from "../vault/index";

type Phase = "uploading" | "parsing" | "committing" | "indexing";

interface Progress {
  phase: Phase;
  done: number;
  total: number;
}

interface Refusal {
  status: number;
  type: string;
  code: string;
  message: string;
}

const PHASE_LABEL: Record<Phase, string> = {
  uploading: "Uploading the archive",
  parsing: "Reading notes",
  committing: "Saving notes",
  indexing: "Indexing for search",
};

/** Send the archive; call `onProgress` as it goes. XMLHttpRequest, not fetch: it
 * reports upload progress, and lets the NDJSON answer be read as it arrives. */
function startImport(file: File, onProgress: (p: Progress) => void): Promise<ImportResult> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url("/v1/import"));
    xhr.setRequestHeader("Accept", "application/x-ndjson");
    xhr.setRequestHeader("Content-Type", "application/zip");
    const token = csrf.value;
    if (token) xhr.setRequestHeader("x-csrf-token", token);
    xhr.withCredentials = true;
    let seen = 0;
    let outcome: { result?: ImportResult; error?: Refusal } | null = null;
    const read = () => {
      const text = xhr.responseText;
      let nl = text.indexOf("\n", seen);
      while (nl >= 0) {
        const line = text.slice(seen, nl).trim();
        seen = nl + 1;
        if (line) {
          const event = JSON.parse(line) as { phase?: Phase; done?: number; total?: number; result?: ImportResult; error?: Refusal };
          if (event.phase) onProgress({ phase: event.phase, done: event.done ?? 0, total: event.total ?? 0 });
          else outcome = event;
        }
        nl = text.indexOf("\n", seen);
      }
    };
    xhr.upload.onprogress = (e) => onProgress({ phase: "uploading", done: e.loaded, total: e.lengthComputable ? e.total : file.size });
    xhr.onprogress = () => xhr.status === 200 && read();
    xhr.onerror = () => reject({ status: 0, type: "network", code: "network_error", message: "the upload was interrupted; nothing was imported" } satisfies Refusal);
    xhr.onload = () => {
      if (xhr.status !== 200) {
        let body: { error?: Refusal } = {};
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          // not JSON
        }
        reject({ ...(body.error ?? { type: "http_error", code: `http_${xhr.status}`, message: xhr.statusText }), status: xhr.status });
        return;
      }
      read();
      const text = xhr.responseText.slice(seen).trim();
      if (text) outcome = JSON.parse(text);
      const done = outcome as { result?: ImportResult; error?: Refusal } | null;
      if (done?.result) resolve(done.result);
      else if (done?.error) reject({ ...done.error, status: 200 });
      else reject({ status: 200, type: "internal_error", code: "no_outcome", message: "the import ended without saying how; check the vault" } satisfies Refusal);
    };
    xhr.send(file);
  });
}

export function exportHref(): string {
  return url("/v1/export");
}

export function TransferPage() {
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [result, setResult] = useState<ImportResult | null>(null);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [running, setRunning] = useState(false);
  const [dragging, setDragging] = useState(false);
  const picker = useRef<HTMLInputElement>(null);

  async function run(): Promise<void> {
    if (!file) return;
    setRunning(true);
    setResult(null);
    setRefusal(null);
    setProgress({ phase: "uploading", done: 0, total: file.size });
    try {
      const out = await startImport(file, setProgress);
      setResult(out);
      void loadVault();
    } catch (err) {
      setRefusal(err as Refusal);
    } finally {
      setRunning(false);
      setProgress(null);
    }
  }

  const fraction = progress && progress.total > 0 ? Math.min(1, progress.done / progress.total) : 0;
  return (
    <section class="transfer-page" aria-labelledby="transfer-h">
      <h1 id="transfer-h">Import and export</h1>
      <div class="cards">
        <section class="card" aria-labelledby="import-h">
          <h2 id="import-h">Import an Obsidian vault</h2>
          <p class="muted">
            A zip of the vault folder. Notes that exist are updated (a new version each), identical ones are left alone, and
            files that are not notes are skipped. All or nothing: if anything is refused, nothing changes.
          </p>
          <div
            class={`drop${dragging ? " dragging" : ""}`}
            onDragOver={(e) => {
              e.preventDefault();
              setDragging(true);
            }}
            onDragLeave={() => setDragging(false)}
            onDrop={(e) => {
              e.preventDefault();
              setDragging(false);
              const dropped = e.dataTransfer?.files[0];
              if (dropped) setFile(dropped);
            }}
          >
            <label class="field">
              <span>Archive (.zip)</span>
              <input
                ref={picker}
                type="file"
                accept=".zip,application/zip"
                onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)}
                disabled={running}
              />
            </label>
            <p class="muted small-text">or drop it here</p>
            {file && (
              <p>
                <strong>{file.name}</strong> · {bytes(file.size)}
              </p>
            )}
          </div>
          <div class="actions">
            <button type="button" class="primary" disabled={!file || running} onClick={() => void run()}>
              {running ? "Importing…" : "Import"}
            </button>
          </div>
          {progress && (
            <div class="import-progress">
              <label for="import-bar">
                {PHASE_LABEL[progress.phase]}:{" "}
                {progress.phase === "uploading"
                  ? `${bytes(progress.done)} of ${bytes(progress.total)}`
                  : `${count(progress.done)} of ${count(progress.total)}`}
              </label>
              <progress id="import-bar" max={1} value={fraction}>
                {Math.round(fraction * 100)}%
              </progress>
            </div>
          )}
          {refusal && (
            <div class="refusal" role="alert">
              <h3>The import was refused; the vault is untouched</h3>
              <p class="refusal-message">{refusal.message}</p>
              <p class="muted small-text">
                {refusal.type} · <code>{refusal.code}</code>
                {refusal.status && refusal.status !== 200 ? ` · HTTP ${refusal.status}` : ""}
              </p>
            </div>
          )}
          {result && (
            <div class="summary" role="status">
              <h3>Imported</h3>
              <dl class="stats">
                <div>
                  <dt>Created</dt>
                  <dd>{count(result.created)}</dd>
                </div>
                <div>
                  <dt>Updated</dt>
                  <dd>{count(result.updated)}</dd>
                </div>
                <div>
                  <dt>Unchanged</dt>
                  <dd>{count(result.unchanged)}</dd>
                </div>
                <div>
                  <dt>Skipped</dt>
                  <dd>{count(result.skipped)}</dd>
                </div>
              </dl>
              {result.skipped_files.length > 0 && (
                <details>
                  <summary>Skipped files ({result.skipped_files.length})</summary>
                  <ul class="skipped">
                    {result.skipped_files.map((f) => (
                      <li key={f}>
                        <code>{f}</code>
                      </li>
                    ))}
                  </ul>
                </details>
              )}
            </div>
          )}
        </section>
        <section class="card" aria-labelledby="export-h">
          <h2 id="export-h">Export</h2>
          <p class="muted">
            Every live note as an Obsidian-compatible zip, folders kept. The download streams from the server, so a vault of
            any size works.
          </p>
          <div class="actions">
            <a class="button primary" href={exportHref()} download>
              Download the vault (.zip)
            </a>
          </div>
        </section>
      </div>
    </section>
  );
}
