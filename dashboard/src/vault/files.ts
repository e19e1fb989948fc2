// The vault's attachments (every file that is not a note: images, PDFs, audio, canvases;
// README "Attachments"), loaded page by page (500 a request) into one in-memory index
// beside the notes' (vault/index.ts): the tree lists them in their folders, the preview
// resolves embeds to them, wikilink completion offers their names. Their bytes come from
// GET /v1/files/{path} on the API's own origin with the session cookie, so an <img> or
// <audio> can point straight at it; the server sends types that can run script (SVG,
// HTML) as downloads under a sandbox CSP, and the dashboard only ever shows an SVG
// through <img>, where it cannot run script.
import { call, get, notePath, url } from "../lib/api";
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

/** Files above this size would go through the presigned upload (`POST /v1/files/uploads`,
 * straight to storage) once the server offers it: on AWS one `PUT /v1/files` passes
 * through Lambda's buffered payload, about 4.7 MB at most (README). Until then every file
 * is one PUT, and the server's refusal of a larger one (413) is shown as it says it. */
export const PRESIGNED_ABOVE_BYTES = 4 * 1024 * 1024;

/** Store `body` at `path` (a new file, or the file there replaced). */
export async function uploadFile(path: string, body: Blob): Promise<FileWriteOut> {
  // The hook for the presigned path: `if (body.size > PRESIGNED_ABOVE_BYTES && <the
  // server offers it>) return uploadPresigned(path, body);` (not built on the server yet).
  const answer = await withSession(() =>
    call<FileWriteOut>("PUT", `/v1/files/${notePath(path)}`, {
      body,
      headers: { "Content-Type": body.type || "application/octet-stream" },
    }),
  );
  putFile(answer.data.file);
  return answer.data;
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
