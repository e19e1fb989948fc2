// The open note's links as the server resolves them (GET /v1/notes/{path}/links, by
// Obsidian's rules in domain/links.py), asked with the note itself, so its preview links
// to the notes they mean and a click follows them at once: a large vault's index takes
// seconds to arrive. Where the server has answered, it wins over the index (which knows
// no folder tie-breaks, partial paths or ./ links, and may be older); the index resolves
// only what the server did not: links typed since, and ones it found dangling (a note
// made here since may have their name).
import { get, notePath } from "../lib/api";
import { Store } from "../lib/store";
import type { OutgoingLink } from "../lib/types";
import { fold } from "./keys";

/** Link key (see keyOf) -> the note it resolves to, or null: the server found it dangling. */
export type Known = Map<string, string | null>;

/** The key a written [[target]] is known by, as resolveLink computes it. */
export const keyOf = (target: string): string => fold(target.trim()).replace(/\.md$/, "");

/** Where a dangling [[target]] points: the note it would create at the root. */
export const danglingPath = (target: string): string => `${target.trim().replace(/\.md$/i, "")}.md`;

/** The server's answer for one note; an empty map when it could not answer (the index
 * then resolves every link, as before there was such a route). */
export function fetchLinks(path: string): Promise<Known> {
  return get<OutgoingLink[]>(`/v1/notes/${notePath(path)}/links`).then(
    (list) => {
      const known: Known = new Map();
      for (const link of list) {
        // Links written as [[...]] (in the body or a property), and any link that reaches
        // an attachment (![[diagram.png]], ![x](img/a.png)): a markdown link to a note is
        // left to the index, as its target is a URL the preview resolves itself.
        const toFile = link.path !== null && !/\.md$/i.test(link.path);
        if (link.kind === "markdown" && !toFile) continue;
        const key = keyOf(link.target);
        if (link.path !== null || !known.has(key)) known.set(key, link.path);
      }
      return known;
    },
    () => new Map(),
  );
}

interface Asked {
  key: string;
  request: Promise<Known>;
  answered: boolean;
}

/** The answer for the note shown (its path key), once it is in. */
export const serverLinks = new Store<{ key: string; known: Known } | null>(null);
let asked: Asked | null = null;
// Root paths the server found a link dangling to (fold(danglingPath)): a 404 there is a
// note to create, not a name the index might still resolve.
const missing = new Set<string>();

/** The note at `path` is opened; `request` is its links' answer (asked with it). */
export function followLinks(path: string, request: Promise<Known>): void {
  const mine: Asked = { key: fold(path), request, answered: false };
  asked = mine;
  void request.then((known) => {
    for (const [key, to] of known) {
      if (to === null) missing.add(fold(`${key}.md`));
      else missing.delete(fold(`${key}.md`));
    }
    mine.answered = true;
    if (asked === mine) serverLinks.set({ key: mine.key, known });
  });
}

/** What the server said about the links of the note at `path`, if it has answered. */
export function knownLinks(path: string): Known | undefined {
  const shown = serverLinks.value;
  return shown && shown.key === fold(path) ? shown.known : undefined;
}

/** The answer still awaited for the open note (a link rendered before it came may point
 * at the wrong note), or null once it is in. */
export function pendingLinks(): Promise<Known> | null {
  return asked && !asked.answered ? asked.request : null;
}

/** Whether the server found a link to this root path dangling. */
export function knownMissing(path: string): boolean {
  return missing.has(fold(path));
}
