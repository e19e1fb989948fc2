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
  /** The vault's attachments: fold(path) -> path, and fold(file name) -> paths. */
  filesByPath?: Map<string, string>;
  filesByName?: Map<string, string[]>;
  /** The linking note (its folder anchors ./ links and breaks ties between files). */
  source?: string;
  /** The server's resolution of the open note's links (vault/links.ts), which wins. */
  known?: Map<string, string | null>;
}

/** Whether a link key can name an attachment: its file name has an extension
 * (domain/links.py may_name_file). */
export function mayNameFile(key: string): boolean {
  const name = key.split("/").pop() ?? "";
  return name.replace(/^\.+|\.+$/g, "").includes(".");
}

/** The attachment a key names, by domain/links.py's rules: an exact path (./, ../ and /
 * forms against the linking note's folder), else the files whose path ends with the key
 * at a folder boundary, the linking note's folder first, then the shortest path. */
function resolveFile(key: string, resolver: Resolver): string | null {
  const byPath = resolver.filesByPath;
  if (!byPath || byPath.size === 0) return null;
  if (/^(\.\.?\/|\/)/.test(key)) {
    const parts = key.startsWith("/") ? [] : fold(folderOf(resolver.source ?? "")).split("/").filter(Boolean);
    for (const segment of key.split("/")) {
      if (segment === "" || segment === ".") continue;
      if (segment === "..") {
        if (parts.length === 0) return null;
        parts.pop();
      } else parts.push(segment);
    }
    return byPath.get(parts.join("/")) ?? null;
  }
  const exact = byPath.get(key);
  if (exact) return exact;
  const found = (resolver.filesByName?.get(key.split("/").pop() ?? "") ?? []).filter((p) => fold(p).endsWith(`/${key}`));
  if (found.length <= 1) return found[0] ?? null;
  const own = fold(folderOf(resolver.source ?? ""));
  const rank = (p: string): [number, number, string] => [fold(folderOf(p)) === own ? 0 : 1, p.length, fold(p)];
  return found.reduce((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    return x[0] !== y[0] ? (x[0] < y[0] ? a : b) : x[1] !== y[1] ? (x[1] < y[1] ? a : b) : x[2] <= y[2] ? a : b;
  });
}

/** The path a [[target]] resolves to (a note's, or an attachment's when the target
 * names a file), or null when it dangles (missing or ambiguous). */
export function resolveLink(target: string, resolver: Resolver): string | null {
  const key = fold(target.trim()).replace(/\.md$/, "");
  const told = resolver.known?.get(key);
  if (told) return told;
  if (mayNameFile(key)) {
    const file = resolveFile(key, resolver);
    if (file) return file;
  }
  const exact = resolver.byLinkKey.get(key);
  if (exact !== undefined || key.includes("/")) return exact ?? null;
  const candidates = resolver.byNameKey.get(key) ?? [];
  return candidates.length === 1 ? (candidates[0] ?? null) : null;
}
