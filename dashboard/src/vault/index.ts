// Every note's summary, loaded page by page (500 a request) into one in-memory index the
// tree, wikilink completion, the preview's link resolution and quick open read. Local
// changes (save, create, move, delete) update it at once; `reload` reads it again.
import { get } from "../lib/api";
import { Store } from "../lib/store";
import type { NoteList, NoteSummary } from "../lib/types";
import { vaultFiles } from "./files";
import { fold, linkKey, nameKey, type Resolver } from "./keys";
import { noOpening } from "./priority";

export interface VaultIndex {
  notes: Map<string, NoteSummary>; // by path key
  loading: boolean;
  complete: boolean;
  error: string | null;
  /** Bumped on every change, so views can memoise on it. */
  revision: number;
}

export const vault = new Store<VaultIndex>({
  notes: new Map(),
  loading: false,
  complete: false,
  error: null,
  revision: 0,
});

let generation = 0;
// While a large vault loads, what has arrived is shown at most this often: each showing
// rebuilds the tree and the link resolver, which would compete with opening a note.
const SHOW_EVERY_MS = 400;

export async function loadVault(): Promise<void> {
  const mine = ++generation;
  const notes = new Map<string, NoteSummary>();
  vault.set({ ...vault.value, loading: true, error: null });
  let cursor: string | null = null;
  let shown = -Infinity;
  try {
    do {
      if (cursor !== null) await noOpening(); // a note being opened goes first
      if (mine !== generation) return;
      const page: NoteList = await get<NoteList>("/v1/notes", { query: { limit: 500, cursor } });
      if (mine !== generation) return;
      for (const n of page.notes) notes.set(fold(n.path), n);
      cursor = page.next_cursor;
      // Show what has arrived: a large vault's tree fills in as it loads.
      if (cursor === null || performance.now() - shown >= SHOW_EVERY_MS) {
        shown = performance.now();
        vault.set({ notes, loading: cursor !== null, complete: cursor === null, error: null, revision: vault.value.revision + 1 });
      }
    } while (cursor);
  } catch (error) {
    if (mine === generation) {
      vault.set({ ...vault.value, loading: false, error: error instanceof Error ? error.message : String(error) });
    }
  }
}

export function putSummary(note: NoteSummary, replacedPath?: string): void {
  const notes = new Map(vault.value.notes);
  if (replacedPath) notes.delete(fold(replacedPath));
  notes.set(fold(note.path), note);
  vault.set({ ...vault.value, notes, revision: vault.value.revision + 1 });
}

export function dropSummary(path: string): void {
  const notes = new Map(vault.value.notes);
  notes.delete(fold(path));
  vault.set({ ...vault.value, notes, revision: vault.value.revision + 1 });
}

let resolverCache: { revision: number; files: number; resolver: Resolver } | null = null;

/** The notes' and attachments' link maps (the linking note's `source` and the server's
 * `known` answer are the caller's to add). */
export function resolver(): Resolver {
  const index = vault.value;
  const attachments = vaultFiles.value;
  if (resolverCache?.revision === index.revision && resolverCache.files === attachments.revision) return resolverCache.resolver;
  const byLinkKey = new Map<string, string>();
  const byNameKey = new Map<string, string[]>();
  for (const n of index.notes.values()) {
    byLinkKey.set(linkKey(n.path), n.path);
    const k = nameKey(n.path);
    const list = byNameKey.get(k);
    if (list) list.push(n.path);
    else byNameKey.set(k, [n.path]);
  }
  const filesByPath = new Map<string, string>();
  const filesByName = new Map<string, string[]>();
  for (const [key, f] of attachments.files) {
    filesByPath.set(key, f.path);
    const name = key.split("/").pop() ?? key;
    const list = filesByName.get(name);
    if (list) list.push(f.path);
    else filesByName.set(name, [f.path]);
  }
  resolverCache = {
    revision: index.revision,
    files: attachments.revision,
    resolver: { byLinkKey, byNameKey, filesByPath, filesByName },
  };
  return resolverCache.resolver;
}

export function summaryOf(path: string): NoteSummary | undefined {
  return vault.value.notes.get(fold(path));
}

/** Resolves once the index is loaded (at once when no load is under way); a load that
 * fails resolves it too, so a caller never waits forever. */
export function whenComplete(): Promise<void> {
  if (!vault.value.loading) return Promise.resolve();
  return new Promise((done) => {
    const stop = vault.subscribe((v) => {
      if (!v.loading) {
        stop();
        done();
      }
    });
  });
}
