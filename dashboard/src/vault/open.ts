// Opening a note fast: its GET starts as early as the page can know which note is wanted
// (the press of a link to it, before the click ends; else the render that shows it, not
// an effect after the next paint), with the GET of its links as the server resolves
// them (vault/links.ts), so following one of them never waits for the vault's index. The
// index of a vault still loading is waited for only when neither could resolve a name.
import { get, notePath } from "../lib/api";
import { appRoot } from "../lib/env";
import { navigate } from "../lib/router";
import type { Note } from "../lib/types";
import { resolver } from "./index";
import { fold, resolveLink } from "./keys";
import { fetchLinks, followLinks, keyOf, pendingLinks, type Known } from "./links";
import { opening } from "./priority";

// A prefetched note is used once, by the opening it was started for, and only while
// fresh: a note read seconds ago could have changed since.
const FRESH_MS = 3000;
interface Early {
  at: number;
  request: Promise<Note>;
  links: Promise<Known>;
}
const early = new Map<string, Early>();

function start(path: string): Early {
  const request = opening(get<Note>(`/v1/notes/${notePath(path)}`));
  request.catch(() => undefined); // the opening that takes it handles the error
  return { at: performance.now(), request, links: opening(fetchLinks(path)) };
}

export function prefetchNote(path: string): void {
  const key = fold(path);
  const hit = early.get(key);
  if (hit && performance.now() - hit.at < FRESH_MS) return;
  early.set(key, start(path));
}

/** The note's GET: the one a press on its link started, if fresh, else a new one. Its
 * links' answer becomes the one the preview and the links panel follow. */
export function openNote(path: string): Promise<Note> {
  const key = fold(path);
  const hit = early.get(key);
  early.delete(key);
  const opening = hit && performance.now() - hit.at < FRESH_MS ? hit : start(path);
  followLinks(path, opening.links);
  return opening.request;
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

/** The note a wikilink of the open note's preview reaches, by the server's answer for
 * its links (else the index, else the root path its href names). */
function meantBy(anchor: HTMLAnchorElement, known: Known): string | null {
  const target = anchor.dataset.target ?? "";
  return known.get(keyOf(target)) || resolveLink(target, resolver()) || linkedNote(anchor);
}

/** A wikilink in the preview rendered before the server's answer for its note's links
 * came: the answer it waits for, else null (its href is the one to follow). */
function earlyWikilink(event: MouseEvent): { anchor: HTMLAnchorElement; answer: Promise<Known> } | null {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return null;
  const anchor = (event.target as Element | null)?.closest?.("a");
  if (!anchor || anchor.target || !anchor.matches(".markdown-body a.wikilink[data-target]")) return null;
  const answer = pendingLinks();
  return answer && linkedNote(anchor) ? { anchor, answer } : null;
}

document.addEventListener(
  "pointerdown",
  (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = (event.target as Element | null)?.closest?.("a");
    if (!anchor || anchor.target) return;
    const waiting = earlyWikilink(event);
    if (waiting) {
      void waiting.answer.then((known) => {
        const path = meantBy(waiting.anchor, known);
        if (path) prefetchNote(path);
      });
      return;
    }
    const path = linkedNote(anchor);
    if (path) prefetchNote(path);
  },
  { capture: true, passive: true },
);

// A click on such a link follows the note the server says it means, once its answer is
// in (asked with the note, so due about when the note itself came); the opening is
// measured from the click.
document.addEventListener(
  "click",
  (event) => {
    if (event.defaultPrevented) return;
    const waiting = earlyWikilink(event);
    if (!waiting) return;
    event.preventDefault();
    performance.clearMarks("mv:navigate");
    performance.mark("mv:navigate");
    const from = location.pathname;
    void waiting.answer.then((known) => {
      const path = meantBy(waiting.anchor, known);
      if (path && location.pathname === from) navigate(`vault/${path}`, { sameOpening: true });
    });
  },
  { capture: true },
);
