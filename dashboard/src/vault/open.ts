// Opening a note fast: its GET starts as early as the page can know which note is wanted
// (the press of a link to it, before the click ends; else the render that shows it, not
// an effect after the next paint), and the index of a vault still loading is waited for
// when a link's name could not be resolved yet.
import { get, notePath } from "../lib/api";
import { appRoot } from "../lib/env";
import type { Note } from "../lib/types";
import { fold } from "./keys";

// A prefetched note is used once, by the opening it was started for, and only while
// fresh: a note read seconds ago could have changed since.
const FRESH_MS = 3000;
const early = new Map<string, { at: number; request: Promise<Note> }>();

function fetchNote(path: string): Promise<Note> {
  return get<Note>(`/v1/notes/${notePath(path)}`);
}

export function prefetchNote(path: string): void {
  const key = fold(path);
  const hit = early.get(key);
  if (hit && performance.now() - hit.at < FRESH_MS) return;
  const request = fetchNote(path);
  request.catch(() => undefined); // the opening that takes it handles the error
  early.set(key, { at: performance.now(), request });
}

/** The note's GET: the one a press on its link started, if fresh, else a new one. */
export function openNote(path: string): Promise<Note> {
  const key = fold(path);
  const hit = early.get(key);
  early.delete(key);
  if (hit && performance.now() - hit.at < FRESH_MS) return hit.request;
  return fetchNote(path);
}

/** Forget prefetched reads (after a write, a prefetched version may be stale). */
export function forgetPrefetched(): void {
  early.clear();
}

/** The note path an app link opens, or null for any other link. */
export function linkedNote(anchor: HTMLAnchorElement): string | null {
  const target = new URL(anchor.href, location.href);
  if (target.origin !== location.origin || !target.pathname.startsWith(`${appRoot}vault/`)) return null;
  let path = target.pathname.slice(appRoot.length + "vault/".length);
  try {
    path = decodeURIComponent(path);
  } catch {
    return null;
  }
  return path.toLowerCase().endsWith(".md") ? path : null;
}

document.addEventListener(
  "pointerdown",
  (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = (event.target as Element | null)?.closest?.("a");
    if (!anchor || anchor.target) return;
    const path = linkedNote(anchor);
    if (path) prefetchNote(path);
  },
  { capture: true, passive: true },
);
