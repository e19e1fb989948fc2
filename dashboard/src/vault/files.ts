// The vault's attachments (every file that is not a note: images, PDFs, audio, canvases;
// README "Attachments"), loaded page by page (500 a request) into one in-memory index
// beside the notes' (vault/index.ts): the tree lists them in their folders, the preview
// resolves embeds to them, wikilink completion offers their names. Their bytes come from
// GET /v1/files/{path} on the API's own origin with the session cookie, so an <img> or
// <audio> can point straight at it; the server sends types that can run script (SVG,
// HTML) as downloads under a sandbox CSP, and the dashboard only ever shows an SVG
// through <img>, where it cannot run script.
import { ApiError, call, get, notePath, url } from "../lib/api";
import { withSession } from "../lib/reauth";
import { Store } from "../lib/store";
import { fold } from "./keys";
import { noOpening } from "./priority";

/** One attachment as GET /v1/files lists it (times in seconds since the epoch). */
export interface VaultFile {
  path: string;
  kind: string;
  size: number;
  sha256: string;
  content_type: string;
  created_at: number;
  updated_at: number;
}

interface FileList {
  files: VaultFile[];
  next_cursor: string | null;
}

export interface FileIndex {
  files: Map<string, VaultFile>; // by fold(path)
  loading: boolean;
  complete: boolean;
  /** Bumped on every change, so views can memoise on it. */
  revision: number;
}

export const vaultFiles = new Store<FileIndex>({ files: new Map(), loading: false, complete: false, revision: 0 });

/** Whether a vault path names a note (else it is an attachment's). */
export const isNotePath = (path: string): boolean => /\.md$/i.test(path);

export const fileName = (path: string): string => path.split("/").pop() ?? path;

const extension = (path: string): string => {
  const name = fileName(path);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
};

export type FileType = "image" | "svg" | "audio" | "video" | "pdf" | "text" | "other";

// What the dashboard shows a file as, by extension, among the types the server serves
// inline (domain/attachments.py): raster images Chromium, Firefox and Safari all draw;
// SVG apart, since it is only ever drawn through <img>.
const TYPES: Record<string, FileType> = {};
for (const [type, names] of [
  ["image", "png jpg jpeg gif webp avif bmp ico"],
  ["svg", "svg"],
  ["audio", "mp3 wav m4a ogg oga flac 3gp"],
  ["video", "webm mp4 m4v mov ogv"],
  ["pdf", "pdf"],
  ["text", "txt csv json canvas css js xml html htm yaml yml log tsv"],
] as const) {
  for (const name of names.split(" ")) TYPES[name] = type;
}

export const fileType = (path: string): FileType => TYPES[extension(path)] ?? "other";

/** The URL of a file's bytes on the API (under the stage prefix on AWS). `sha256`, when
 * known, makes the URL change with the content, so a replaced image is not shown stale. */
export function fileUrl(path: string, sha256?: string): string {
  return url(`/v1/files/${notePath(path)}`, sha256 ? { v: sha256.slice(0, 16) } : undefined);
}

/** The path every file URL starts with (what the preview's sanitiser lets images load from). */
export const filesPrefix = (): string => url("/v1/files/");

let generation = 0;

export async function loadFiles(): Promise<void> {
  const mine = ++generation;
  const files = new Map<string, VaultFile>();
  vaultFiles.set({ ...vaultFiles.value, loading: true });
  let cursor: string | null = null;
  try {
    do {
      await noOpening(); // a note being opened goes first
      if (mine !== generation) return;
      const page: FileList = await get<FileList>("/v1/files", { query: { limit: 500, cursor } });
      if (mine !== generation) return;
      for (const f of page.files) files.set(fold(f.path), f);
      cursor = page.next_cursor;
    } while (cursor);
  } catch {
    // A server without attachments (or a refused page): the vault shows its notes only.
  }
  if (mine === generation) {
    vaultFiles.set({ files, loading: false, complete: true, revision: vaultFiles.value.revision + 1 });
  }
}

export function putFile(file: VaultFile): void {
  const files = new Map(vaultFiles.value.files);
  files.set(fold(file.path), file);
  vaultFiles.set({ ...vaultFiles.value, files, revision: vaultFiles.value.revision + 1 });
}

export function dropFile(path: string): void {
  const files = new Map(vaultFiles.value.files);
  files.delete(fold(path));
  vaultFiles.set({ ...vaultFiles.value, files, revision: vaultFiles.value.revision + 1 });
}

export const fileOf = (path: string): VaultFile | undefined => vaultFiles.value.files.get(fold(path));

/** One file's metadata from the server (the listing at its path), or null: no such file. */
export async function fetchFile(path: string): Promise<VaultFile | null> {
  const page = await get<FileList>("/v1/files", { query: { prefix: path, limit: 20 } });
  return page.files.find((f) => fold(f.path) === fold(path)) ?? null;
}

interface FileWriteOut {
  file: VaultFile;
  changed: boolean;
  message: string;
}

/** Files above this size go through the presigned upload (`POST /v1/files/uploads`, the
 * bytes straight to storage, then `.../complete`): on AWS one `PUT /v1/files` passes
 * through Lambda's buffered payload, about 4.7 MB at most (README "Large files"). The CLI
 * uses the same threshold (4 MiB). */
export const PRESIGNED_ABOVE_BYTES = 4 * 1024 * 1024;

interface UploadOut {
  id: string;
  path: string;
  bytes: number;
  upload: { method: string; url: string; headers: Record<string, string>; max_bytes: number; expires_at: string };
}

/** Reports an upload's progress: bytes sent of the total. */
export type Progress = (sent: number, total: number) => void;

/** Store `body` at `path` (a new file, or the file there replaced). */
export async function uploadFile(path: string, body: Blob, onProgress?: Progress): Promise<FileWriteOut> {
  let out: FileWriteOut | null = null;
  if (body.size > PRESIGNED_ABOVE_BYTES) out = await uploadPresigned(path, body, onProgress);
  if (out === null) {
    const answer = await withSession(() =>
      call<FileWriteOut>("PUT", `/v1/files/${notePath(path)}`, {
        body,
        headers: { "Content-Type": body.type || "application/octet-stream" },
      }),
    );
    out = answer.data;
  }
  putFile(out.file);
  return out;
}

/** The presigned path; null when the server has no such route (an older one: the caller
 * sends one PUT instead). */
async function uploadPresigned(path: string, body: Blob, onProgress?: Progress): Promise<FileWriteOut | null> {
  let began: UploadOut;
  try {
    began = (
      await withSession(() =>
        call<UploadOut>("POST", "/v1/files/uploads", { json: { path, bytes: body.size, content_type: body.type || null } }),
      )
    ).data;
  } catch (error) {
    // An older server: no such route (or POST refused on /v1/files/{path}).
    if (error instanceof ApiError && (error.code === "route_not_found" || error.status === 405)) return null;
    throw error;
  }
  await sendTo(began.upload, body, onProgress);
  return (await withSession(() => call<FileWriteOut>("POST", `/v1/files/uploads/${encodeURIComponent(began.id)}/complete`))).data;
}

/** PUT the bytes where the upload says, with the headers it names and nothing else (no
 * session cookie, no CSRF token: the URL authorises exactly this upload).
 * XMLHttpRequest, not fetch: it reports upload progress. */
function sendTo(link: UploadOut["upload"], body: Blob, onProgress?: Progress): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(link.method, link.url);
    for (const [name, value] of Object.entries(link.headers)) {
      if (name.toLowerCase() !== "content-length") xhr.setRequestHeader(name, value);
    }
    xhr.withCredentials = false;
    if (onProgress) xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : body.size);
    xhr.onerror = () => reject(new ApiError(0, "network", "upload_failed", "the upload was interrupted or refused by the storage; nothing was stored"));
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      // memvault answers a typed error; S3 answers XML (its Code and Message).
      let message = `the upload was refused (HTTP ${xhr.status}); nothing was stored`;
      try {
        const parsed = JSON.parse(xhr.responseText) as { error?: { message?: string } };
        if (parsed.error?.message) message = parsed.error.message;
      } catch {
        const found = /<Message>([^<]*)<\/Message>/.exec(xhr.responseText)?.[1];
        if (found) message = `the upload was refused: ${found}; nothing was stored`;
      }
      reject(new ApiError(xhr.status, "storage_error", `http_${xhr.status}`, message));
    };
    xhr.send(body);
  });
}

export async function deleteFile(path: string): Promise<void> {
  await withSession(() => call("DELETE", `/v1/files/${notePath(path)}`));
  dropFile(path);
}

/** A file's bytes (kept by a delete so it can be undone; read for a text preview). */
export async function fileBytes(path: string): Promise<Blob> {
  const response = await fetch(fileUrl(path), { credentials: "same-origin", cache: "no-store" });
  if (!response.ok) throw new Error(`memvault answered ${response.status} for ${path}`);
  return response.blob();
}
