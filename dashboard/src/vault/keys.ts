// The vault's identities, as domain/paths.py and domain/links.py define them: a path
// key (NFC, case-folded) names a note; a wikilink resolves by exact path, else a bare
// name resolves to Note.md at the root, else to the one note with that file name.

export function fold(text: string): string {
  return text.normalize("NFC").toLowerCase().normalize("NFC");
}

export const stem = (path: string): string => (path.split("/").pop() ?? path).replace(/\.md$/i, "");
export const folderOf = (path: string): string => {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
};
export const linkKey = (path: string): string => fold(path).replace(/\.md$/, "");
export const nameKey = (path: string): string => fold(stem(path));

export interface Resolver {
  byLinkKey: Map<string, string>;
  byNameKey: Map<string, string[]>;
  /** The server's resolution of the open note's links (vault/links.ts), which wins. */
  known?: Map<string, string | null>;
}

/** The path a [[target]] resolves to, or null when it dangles (missing or ambiguous). */
export function resolveLink(target: string, resolver: Resolver): string | null {
  const key = fold(target.trim()).replace(/\.md$/, "");
  const told = resolver.known?.get(key);
  if (told) return told;
  const exact = resolver.byLinkKey.get(key);
  if (exact !== undefined || key.includes("/")) return exact ?? null;
  const candidates = resolver.byNameKey.get(key) ?? [];
  return candidates.length === 1 ? (candidates[0] ?? null) : null;
}
