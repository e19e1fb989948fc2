// Import an Obsidian vault (a zip) and export the vault as one, both as jobs of the
// import/export job API, so a vault of hundreds of MB works from the browser on both
// backends: the archive goes straight to the upload URL the job names (a presigned S3
// PUT on AWS, memvault's own token URL when embedded; neither takes the session), with
// a real upload progress bar; the job then runs by itself and is polled for its phase,
// its report or its refusal. An import is all or nothing: a refused archive leaves the
// vault as it was, and the refusal is shown in full (which file, which limit). An
// export ends in a download link. The organisation's recent jobs are listed below.
import type { ComponentChild } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, get, post } from "../lib/api";
import { withSession } from "../lib/reauth";
import { DropZone } from "../ui/drop";
import type { ImportResult, Job, JobLink, JobPhase } from "../lib/types";
import { ago, bytes, count, when } from "../ui/format";
import { loadFiles } from "../vault/files";
import { loadVault } from "../vault/index";

interface Refusal {
  /** The HTTP status of a refused request; absent for a job that failed as it ran. */
  status?: number;
  type: string;
  code: string;
  message: string;
}

interface Progress {
  phase: JobPhase | "queued";
  done: number;
  total: number;
}

const PHASE_LABEL: Record<Progress["phase"], string> = {
  uploading: "Uploading the archive",
  queued: "Waiting for the job to start",
  parsing: "Reading notes",
  committing: "Saving notes",
  indexing: "Indexing for search",
  exporting: "Writing the archive",
};

const ENDED = new Set(["succeeded", "failed", "expired"]);
const ACTIVE = new Set(["queued", "running"]);

function refusalOf(error: unknown): Refusal {
  if (error instanceof ApiError) return { status: error.status, type: error.type, code: error.code, message: error.message };
  return { type: "internal_error", code: "unexpected", message: error instanceof Error ? error.message : String(error) };
}

/** PUT the archive to the job's upload URL with the headers it names and nothing else:
 * no Authorization, no session cookie sent cross-origin (S3), no CSRF token. The URL
 * authorises exactly this upload. XMLHttpRequest, not fetch: it reports upload progress. */
function upload(link: JobLink, file: File, onProgress: (done: number, total: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(link.method, link.url);
    for (const [name, value] of Object.entries(link.headers)) {
      // The browser sets content-length itself (and refuses a script that tries).
      if (name.toLowerCase() !== "content-length") xhr.setRequestHeader(name, value);
    }
    xhr.withCredentials = false;
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onerror = () =>
      reject({ type: "network", code: "upload_failed", message: "the upload was interrupted or refused by the storage; nothing was imported" } satisfies Refusal);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve();
        return;
      }
      // memvault answers a typed error; S3 answers XML (its Code and Message).
      let refusal: Refusal = { status: xhr.status, type: "http_error", code: `http_${xhr.status}`, message: `the upload was refused (HTTP ${xhr.status}); nothing was imported` };
      try {
        const body = JSON.parse(xhr.responseText) as { error?: Refusal };
        if (body.error) refusal = { ...body.error, status: xhr.status };
      } catch {
        const code = /<Code>([^<]*)<\/Code>/.exec(xhr.responseText)?.[1];
        const message = /<Message>([^<]*)<\/Message>/.exec(xhr.responseText)?.[1];
        if (code) refusal = { status: xhr.status, type: "storage_error", code, message: `the upload was refused: ${message ?? code}; nothing was imported` };
      }
      reject(refusal);
    };
    xhr.send(file);
  });
}

const jobPath = (job: Job) => `/v1/${job.kind === "import" ? "imports" : "exports"}/${encodeURIComponent(job.id)}`;

/** Poll the job until it has ended; `onUpdate` sees every state on the way. */
async function follow(job: Job, onUpdate: (job: Job) => void, live: () => boolean): Promise<Job> {
  let current = job;
  let wait = 200;
  while (!ENDED.has(current.status) && live()) {
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(1500, Math.round(wait * 1.4));
    // A session that expires meanwhile waits for the sign-in dialog: the job goes on.
    const asked = current;
    current = await withSession(() => get<Job>(jobPath(asked)));
    onUpdate(current);
  }
  return current;
}

function progressOf(job: Job): Progress {
  if (job.status === "queued" || (job.status === "running" && !job.progress.phase)) return { phase: "queued", done: 0, total: 0 };
  return { phase: job.progress.phase ?? "queued", done: job.progress.done, total: job.progress.total };
}

function ProgressBar(props: { id: string; progress: Progress }) {
  const { phase, done, total } = props.progress;
  const fraction = total > 0 ? Math.min(1, done / total) : undefined;
  return (
    <div class="import-progress">
      <label for={props.id}>
        {PHASE_LABEL[phase]}
        {total > 0 ? `: ${phase === "uploading" ? `${bytes(done)} of ${bytes(total)}` : `${count(done)} of ${count(total)}`}` : "…"}
      </label>
      {/* No value: the browser shows a bar that is busy without saying how far. */}
      <progress id={props.id} max={1} value={fraction}>
        {fraction === undefined ? "" : `${Math.round(fraction * 100)}%`}
      </progress>
    </div>
  );
}

function RefusalBox(props: { refusal: Refusal; title: string }) {
  const r = props.refusal;
  return (
    <div class="refusal" role="alert">
      <h3>{props.title}</h3>
      <p class="refusal-message">{r.message}</p>
      <p class="muted small-text">
        {r.type} · <code>{r.code}</code>
        {r.status ? ` · HTTP ${r.status}` : ""}
      </p>
    </div>
  );
}

function importSummary(r: Partial<ImportResult>): string {
  const parts = [`${count(r.created ?? 0)} created`, `${count(r.updated ?? 0)} updated`, `${count(r.unchanged ?? 0)} unchanged`, `${count(r.skipped ?? 0)} skipped`];
  const files = (r.files_created ?? 0) + (r.files_updated ?? 0) + (r.files_unchanged ?? 0);
  if (files) parts.push(`${count(files)} file${files === 1 ? "" : "s"}`);
  return parts.join(" · ");
}

export function TransferPage() {
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [result, setResult] = useState<ImportResult | null>(null);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [running, setRunning] = useState(false);
  const [exportJob, setExportJob] = useState<Job | null>(null);
  const [exportRefusal, setExportRefusal] = useState<Refusal | null>(null);
  const [jobs, setJobs] = useState<Job[] | null>(null);
  const [jobsError, setJobsError] = useState<Refusal | null>(null);
  const mounted = useRef(true);
  const live = () => mounted.current;
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  async function refresh(): Promise<void> {
    try {
      const list = await get<{ items: Job[] }>("/v1/jobs", { query: { limit: 10 } });
      if (!live()) return;
      setJobs(list.items);
      setJobsError(null);
    } catch (err) {
      if (live()) setJobsError(refusalOf(err));
    }
  }
  useEffect(() => void refresh(), []);
  // While a listed job is under way (started elsewhere, or before a reload), keep it current.
  const busy = jobs?.some((j) => ACTIVE.has(j.status)) ?? false;
  useEffect(() => {
    if (!busy) return undefined;
    const timer = window.setInterval(() => void refresh(), 2000);
    return () => window.clearInterval(timer);
  }, [busy]);

  async function runImport(): Promise<void> {
    if (!file) return;
    setRunning(true);
    setResult(null);
    setRefusal(null);
    setProgress({ phase: "uploading", done: 0, total: file.size });
    try {
      const job = await withSession(() => post<Job>("/v1/imports", { bytes: file.size, filename: file.name }));
      if (!job.upload) throw new Error("the job named no upload URL");
      await upload(job.upload, file, (done, total) => live() && setProgress({ phase: "uploading", done, total }));
      void refresh();
      const ended = await follow({ ...job, status: job.status === "awaiting_upload" ? "queued" : job.status }, (j) => live() && setProgress(progressOf(j)), live);
      if (!live()) return;
      if (ended.status === "succeeded") {
        setResult(ended.report as ImportResult);
        void loadVault();
        void loadFiles(); // the archive's attachments
      } else {
        setRefusal(ended.error ?? { type: "job_expired", code: ended.status, message: `the job ${ended.status} before it ran; nothing was imported` });
      }
    } catch (err) {
      if (live()) setRefusal(err instanceof ApiError || err instanceof Error ? refusalOf(err) : (err as Refusal));
    } finally {
      if (live()) {
        setRunning(false);
        setProgress(null);
        void refresh();
      }
    }
  }

  async function runExport(): Promise<void> {
    setExportRefusal(null);
    try {
      const job = await withSession(() => post<Job>("/v1/exports"));
      setExportJob(job);
      void refresh();
      const ended = await follow(job, (j) => live() && setExportJob(j), live);
      if (!live()) return;
      if (ended.status !== "succeeded") {
        setExportRefusal(ended.error ?? { type: "job_expired", code: ended.status, message: `the export ${ended.status}` });
      }
    } catch (err) {
      if (live()) setExportRefusal(refusalOf(err));
    } finally {
      if (live()) void refresh();
    }
  }

  const exporting = exportJob !== null && !ENDED.has(exportJob.status);
  const download = exportJob?.status === "succeeded" ? exportJob.download : null;
  return (
    <section class="transfer-page" aria-labelledby="transfer-h">
      <h1 id="transfer-h">Import and export</h1>
      <div class="cards">
        <section class="card" aria-labelledby="import-h">
          <h2 id="import-h">Import an Obsidian vault</h2>
          <p class="muted">
            A zip of the vault folder. Notes that exist are updated (a new version each), identical ones are left alone, and
            the other files (images, PDFs, canvases, .obsidian/ settings) are stored beside them. All or nothing: if anything is refused, nothing changes.
          </p>
          <DropZone
            onFiles={(dropped) => {
              if (dropped[0]) setFile(dropped[0]);
            }}
          >
            <label class="field">
              <span>Archive (.zip)</span>
              <input
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
          </DropZone>
          <div class="actions">
            <button type="button" class="primary" disabled={!file || running} onClick={() => void runImport()}>
              {running ? "Importing…" : "Import"}
            </button>
          </div>
          {progress && <ProgressBar id="import-bar" progress={progress} />}
          {refusal && <RefusalBox refusal={refusal} title="The import was refused; the vault is untouched" />}
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
                {(result.files_created ?? 0) + (result.files_updated ?? 0) + (result.files_unchanged ?? 0) > 0 && (
                  <div>
                    <dt>Files</dt>
                    <dd>{count((result.files_created ?? 0) + (result.files_updated ?? 0) + (result.files_unchanged ?? 0))}</dd>
                  </div>
                )}
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
            Every live note as an Obsidian-compatible zip, folders kept. The archive is written by a job on the server, then
            downloaded straight from storage, so a vault of any size works.
          </p>
          <div class="actions">
            <button type="button" class="primary" disabled={exporting} onClick={() => void runExport()}>
              {exporting ? "Exporting…" : "Export the vault"}
            </button>
          </div>
          {exporting && exportJob && <ProgressBar id="export-bar" progress={progressOf(exportJob)} />}
          {exportRefusal && <RefusalBox refusal={exportRefusal} title="The export did not finish" />}
          {download && (
            <div class="summary" role="status">
              <h3>Exported</h3>
              <p>
                {count(exportJob?.report?.notes ?? 0)} notes · {bytes(download.bytes)} · the link works until {when(download.expires_at)}
              </p>
              <div class="actions">
                <a class="button primary" href={download.url} download={download.filename}>
                  Download the vault (.zip)
                </a>
              </div>
            </div>
          )}
        </section>
      </div>
      <section class="card recent-jobs" aria-labelledby="jobs-h">
        <h2 id="jobs-h">Recent imports and exports</h2>
        {jobsError && <RefusalBox refusal={jobsError} title="The jobs could not be listed" />}
        {jobs === null && !jobsError && <p class="muted">Loading…</p>}
        {jobs?.length === 0 && <p class="muted">No import or export yet.</p>}
        {jobs && jobs.length > 0 && (
          <div class="table-wrap">
            <table class="data compact jobs">
              <thead>
                <tr>
                  <th scope="col">Job</th>
                  <th scope="col">Status</th>
                  <th scope="col">Size</th>
                  <th scope="col">Started</th>
                  <th scope="col">Outcome</th>
                </tr>
              </thead>
              <tbody>
                {jobs.map((j) => (
                  <JobRow key={j.id} job={j} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </section>
  );
}

function JobRow(props: { job: Job }) {
  const j = props.job;
  let outcome: ComponentChild = "";
  if (j.status === "succeeded" && j.kind === "import" && j.report) outcome = importSummary(j.report);
  else if (j.status === "succeeded" && j.kind === "export")
    outcome = j.download ? (
      <a href={j.download.url} download={j.download.filename}>
        Download ({count(j.report?.notes ?? 0)} notes)
      </a>
    ) : (
      "the archive is no longer kept"
    );
  else if (j.status === "failed" && j.error)
    outcome = (
      <span class="error-text" title={j.error.message}>
        <code>{j.error.code}</code>: {j.error.message}
      </span>
    );
  else if (ACTIVE.has(j.status) && j.progress.phase) outcome = `${PHASE_LABEL[j.progress.phase]}${j.progress.total ? `: ${count(j.progress.done)} of ${count(j.progress.total)}` : ""}`;
  return (
    <tr>
      <th scope="row">
        {j.kind === "import" ? "Import" : "Export"}
        {j.filename && <span class="muted"> · {j.filename}</span>}
      </th>
      <td>
        <span class={`badge status-${j.status}`}>{j.status.replace("_", " ")}</span>
      </td>
      <td>{j.bytes ? bytes(j.bytes) : ""}</td>
      <td title={when(j.created_at)}>{ago(j.created_at)}</td>
      <td class="job-outcome">{outcome}</td>
    </tr>
  );
}
