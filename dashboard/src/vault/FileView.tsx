// One attachment: what it is (an image drawn, audio or video in the browser's player, a
// text file's first part as text, anything else a download), its type, size and time,
// the notes that embed or link it (GET /v1/notes/{path}/backlinks on its path), download
// and delete (confirmed; undone by storing the bytes read before the delete again). And
// the dialog that uploads files into a folder (PUT /v1/files/{path}).
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, describe, get, notePath } from "../lib/api";
import { href, navigate } from "../lib/router";
import { useStore } from "../lib/store";
import type { NoteSummary } from "../lib/types";
import { Confirm, Dialog } from "../ui/dialog";
import { DropZone } from "../ui/drop";
import { bytes, count } from "../ui/format";
import { toast } from "../ui/toast";
import {
  deleteFile,
  dropFile,
  fetchFile,
  fileBytes,
  fileName,
  fileOf,
  fileType,
  fileUrl,
  isNotePath,
  putFile,
  uploadFile,
  vaultFiles,
  type VaultFile,
} from "./files";
import { folderOf } from "./keys";

// A text file is shown up to this much (the rest is a download away).
const TEXT_PREVIEW_BYTES = 256 * 1024;

const TYPE_NAMES = { image: "Image", svg: "SVG image", audio: "Audio", video: "Video", pdf: "PDF", text: "Text", other: "File" };

function epoch(seconds: number): string {
  return new Date(seconds * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function FileView(props: { path: string; onUpload: () => void }) {
  const { path } = props;
  useStore(vaultFiles); // the index's copy may change (an upload over it)
  const [meta, setMeta] = useState<VaultFile | null | undefined>(() => fileOf(path));
  const [error, setError] = useState<string | null>(null);
  const [backlinks, setBacklinks] = useState<NoteSummary[] | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [dimensions, setDimensions] = useState<string | null>(null);
  const [text, setText] = useState<string | null>(null);
  const name = fileName(path);
  const type = fileType(path);
  const shown = fileOf(path) ?? meta ?? undefined;

  useEffect(() => {
    let live = true;
    setMeta(fileOf(path));
    setError(null);
    setBacklinks(null);
    setDimensions(null);
    setText(null);
    fetchFile(path).then(
      (found) => {
        if (!live) return;
        setMeta(found);
        const indexed = fileOf(path);
        if (found && indexed?.sha256 !== found.sha256) putFile(found);
        if (!found && indexed) dropFile(path);
      },
      (err: unknown) => live && setError(describe(err)),
    );
    get<NoteSummary[]>(`/v1/notes/${notePath(path)}/backlinks`).then(
      (list) => live && setBacklinks(list),
      () => live && setBacklinks([]),
    );
    return () => {
      live = false;
    };
  }, [path]);

  // A text file's first part, as text (never as markup).
  useEffect(() => {
    if (type !== "text" || !shown) return undefined;
    let live = true;
    fileBytes(path)
      .then((blob) => blob.slice(0, TEXT_PREVIEW_BYTES).text())
      .then(
        (t) => live && setText(t),
        () => live && setText(null),
      );
    return () => {
      live = false;
    };
  }, [path, shown?.sha256]);

  async function remove(): Promise<void> {
    setConfirming(false);
    const deleted = path;
    // Files keep no history: the bytes read now are what an undo stores again.
    let kept: Blob | null = null;
    try {
      if (!shown || shown.size <= 25 * 1024 * 1024) kept = await fileBytes(deleted);
    } catch {
      kept = null;
    }
    try {
      await deleteFile(deleted);
    } catch (err) {
      toast(`Not deleted: ${describe(err)}`, "error");
      return;
    }
    const undo = kept;
    toast(
      `Deleted ${deleted}.`,
      "info",
      undo
        ? {
            label: "Undo",
            run: () =>
              void uploadFile(deleted, undo).then(
                () => toast(`Restored ${deleted}.`, "success"),
                (err: unknown) => toast(`Could not undo: ${describe(err)}`, "error"),
              ),
          }
        : undefined,
    );
    navigate("vault", { replace: true });
  }

  const src = fileUrl(path, shown?.sha256);
  const folder = folderOf(path);
  const missing = meta === null && !fileOf(path);
  const onImage = (event: Event) => {
    const img = event.currentTarget as HTMLImageElement;
    if (img.naturalWidth) setDimensions(`${count(img.naturalWidth)} × ${count(img.naturalHeight)} px`);
  };

  let preview;
  if (missing) {
    preview = (
      <p class="notice">
        There is no file at <code>{path}</code>. Notes that embed it show it as missing until one is uploaded there.{" "}
        <button type="button" class="small" onClick={props.onUpload}>
          Upload a file
        </button>
      </p>
    );
  } else if (!shown) {
    preview = <p class="muted">Loading…</p>;
  } else if (type === "image" || type === "svg") {
    // An SVG too goes through <img>, where its scripts never run (never inline DOM).
    preview = <img class="file-image" src={src} alt={name} onLoad={onImage} />;
  } else if (type === "audio") {
    preview = (
      <audio class="file-media" controls preload="metadata" src={src}>
        <a href={src} download={name}>
          Download {name}
        </a>
      </audio>
    );
  } else if (type === "video") {
    preview = (
      <video class="file-media" controls preload="metadata" src={src}>
        <a href={src} download={name}>
          Download {name}
        </a>
      </video>
    );
  } else if (type === "text") {
    preview =
      text === null ? (
        <p class="muted">Loading…</p>
      ) : (
        <pre class="file-text" tabIndex={0} aria-label={`Text of ${name}`}>
          {text}
          {shown.size > TEXT_PREVIEW_BYTES ? "\n…" : ""}
        </pre>
      );
  } else {
    preview = (
      <p class="muted">
        {type === "pdf"
          ? "A PDF is not shown here: the server sends vault files under a sandbox that keeps them out of the page. Download it to read it."
          : "No preview for this type of file."}{" "}
        <a href={src} download={name}>
          Download {name}
        </a>
      </p>
    );
  }

  return (
    <section class="note-view file-view" aria-label={`File ${name}`}>
      <header class="note-header">
        <div class="note-title">
          <h1>{name}</h1>
          <div class="note-meta">
            <span class="note-path">
              {folder ? `${folder}/` : ""}
              <strong>{name}</strong>
            </span>
            {shown && <span>{TYPE_NAMES[type]}</span>}
          </div>
        </div>
        <div class="toolbar" role="toolbar" aria-label="File actions">
          {shown && (
            <a class="button" href={src} download={name}>
              Download
            </a>
          )}
          <button type="button" onClick={props.onUpload}>
            Upload
          </button>
          <button type="button" class="danger-outline" onClick={() => setConfirming(true)} disabled={!shown}>
            Delete
          </button>
        </div>
      </header>
      {error && (
        <p class="error-text pad" role="alert">
          {error}
        </p>
      )}
      <div class="file-body">
        <div class="file-preview">{preview}</div>
        {shown && (
          <dl class="file-facts">
            <div>
              <dt>Type</dt>
              <dd>{shown.content_type}</dd>
            </div>
            <div>
              <dt>Size</dt>
              <dd>{bytes(shown.size)}</dd>
            </div>
            <div>
              <dt>Updated</dt>
              <dd>{epoch(shown.updated_at)}</dd>
            </div>
            {dimensions && (
              <div>
                <dt>Dimensions</dt>
                <dd>{dimensions}</dd>
              </div>
            )}
          </dl>
        )}
      </div>
      <footer class="links-panel single">
        <section aria-labelledby="file-backlinks-h">
          <h2 id="file-backlinks-h">Backlinks {backlinks && <span class="count">{backlinks.length}</span>}</h2>
          {backlinks === null ? (
            <p class="muted">Loading…</p>
          ) : backlinks.length === 0 ? (
            <p class="muted">No note embeds or links this file.</p>
          ) : (
            <ul>
              {backlinks.map((b) => (
                <li key={b.path}>
                  <a href={href(`vault/${b.path}`)}>{b.title}</a> <span class="muted">{b.path}</span>
                </li>
              ))}
            </ul>
          )}
        </section>
      </footer>
      <Confirm
        open={confirming}
        title={`Delete ${name}?`}
        message={
          <p>
            <code>{path}</code> leaves the vault
            {backlinks && backlinks.length > 0 ? `; the ${backlinks.length} note(s) that embed or link it will show it as missing` : ""}. Files keep no
            history: Undo, right after, stores it again.
          </p>
        }
        confirm="Delete"
        danger
        onAnswer={(yes) => (yes ? void remove() : setConfirming(false))}
      />
    </section>
  );
}

/** Upload one or more files into a folder; `onDone` gets the paths stored. */
export function UploadDialog(props: {
  open: boolean;
  folder: string;
  /** Files dropped on the vault's side panel, to upload (else chosen in the dialog). */
  dropped?: File[];
  onClose: () => void;
  onDone: (paths: string[]) => void;
}) {
  const [folder, setFolder] = useState(props.folder);
  const [chosen, setChosen] = useState<File[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [failed, setFailed] = useState<string[]>([]);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (!props.open) return;
    setFolder(props.folder);
    setChosen(props.dropped ?? []);
    setFailed([]);
    setBusy(null);
  }, [props.open]);

  const clean = folder.trim().replace(/^\/+|\/+$/g, "");
  const target = (file: File) => (clean ? `${clean}/${file.name}` : file.name);
  const notes = chosen.filter((f) => isNotePath(f.name));
  const replaced = chosen.filter((f) => !isNotePath(f.name) && fileOf(target(f)));

  async function upload(event: Event): Promise<void> {
    event.preventDefault();
    const stored: string[] = [];
    const refused: string[] = [];
    const files = chosen.filter((f) => !isNotePath(f.name));
    for (const [i, file] of files.entries()) {
      const path = target(file);
      const doing = `Uploading ${i + 1} of ${files.length}: ${file.name}`;
      setBusy(`${doing}…`);
      try {
        // A large file goes straight to storage (vault/files.ts), its progress shown.
        const out = await uploadFile(path, file, (sent, total) => setBusy(`${doing}: ${Math.floor((100 * sent) / Math.max(1, total))}%`));
        stored.push(out.file.path);
      } catch (err) {
        refused.push(`${file.name}: ${err instanceof ApiError ? err.message : describe(err)}`);
      }
    }
    setBusy(null);
    if (stored.length > 0) toast(stored.length === 1 ? `Uploaded ${stored[0]}.` : `Uploaded ${stored.length} files.`, "success");
    if (refused.length > 0) {
      setFailed(refused);
      return;
    }
    props.onDone(stored);
  }

  return (
    <Dialog open={props.open} title="Upload files" onClose={props.onClose}>
      <form onSubmit={(e) => void upload(e)}>
        <label class="field">
          <span>Folder</span>
          <input value={folder} onInput={(e) => setFolder((e.target as HTMLInputElement).value)} placeholder="(the vault's root)" spellcheck={false} />
        </label>
        <DropZone onFiles={setChosen}>
          <label class="field">
            <span>Files</span>
            <input ref={input} type="file" multiple onChange={(e) => setChosen([...((e.target as HTMLInputElement).files ?? [])])} />
          </label>
          <p class="muted small-text">or drop them here (or on the vault's side panel).</p>
        </DropZone>
        {chosen.length > 0 && (
          <ul class="upload-list">
            {chosen.map((f) => (
              <li key={f.name}>
                <code>{target(f)}</code> <span class="muted">{bytes(f.size)}</span>
              </li>
            ))}
          </ul>
        )}
        {replaced.length > 0 && (
          <p class="notice">
            {replaced.length === 1 ? `${target(replaced[0]!)} is` : `${replaced.length} of these are`} in the vault already: uploading replaces
            {replaced.length === 1 ? " it" : " them"}, and notes embedding {replaced.length === 1 ? "it" : "them"} show the new one.
          </p>
        )}
        {notes.length > 0 && (
          <p class="notice">
            Markdown files are notes, not attachments: {notes.map((f) => f.name).join(", ")} {notes.length === 1 ? "is" : "are"} left out (import a
            vault, or create the note and paste its text).
          </p>
        )}
        {busy && (
          <p class="muted" role="status">
            {busy}
          </p>
        )}
        {failed.length > 0 && (
          <div class="refusal" role="alert">
            <h3>Not uploaded</h3>
            <ul>
              {failed.map((f) => (
                <li key={f}>{f}</li>
              ))}
            </ul>
          </div>
        )}
        <div class="dialog-actions">
          <button type="button" onClick={props.onClose}>
            {failed.length > 0 ? "Close" : "Cancel"}
          </button>
          <button type="submit" class="primary" disabled={busy !== null || chosen.length === notes.length}>
            Upload
          </button>
        </div>
      </form>
    </Dialog>
  );
}
