// A three-way, line-based merge for a conflicting save: the version the edit started
// from (base), the edit (mine) and the version saved meanwhile (theirs). Changes that
// touch different lines are both kept; where both sides changed the same lines, the
// result holds both between conflict markers for the person to settle before saving.
import { diffLines } from "diff";

interface Hunk {
  start: number; // first base line replaced
  end: number; // one past the last base line replaced
  lines: string[]; // what replaces them
}

function split(text: string): string[] {
  const lines = text.split("\n");
  return lines.map((line, i) => (i < lines.length - 1 ? `${line}\n` : line)).filter((l, i, all) => l !== "" || i < all.length - 1);
}

function hunks(base: string, other: string): Hunk[] {
  const out: Hunk[] = [];
  let line = 0;
  let pending: Hunk | null = null;
  for (const part of diffLines(base, other)) {
    const lines = split(part.value);
    if (part.added) {
      pending ??= { start: line, end: line, lines: [] };
      pending.lines.push(...lines);
    } else if (part.removed) {
      pending ??= { start: line, end: line, lines: [] };
      line += lines.length;
      pending.end = line;
    } else {
      if (pending) out.push(pending);
      pending = null;
      line += lines.length;
    }
  }
  if (pending) out.push(pending);
  return out;
}

function touches(h: Hunk, start: number, end: number, empty: boolean): boolean {
  if (empty) return h.start === start;
  if (h.start === h.end || start === end) return h.start <= end && start <= h.end;
  return h.start < end && start < h.end;
}

export interface Merged {
  text: string;
  conflicts: number;
}

export function merge3(base: string, mine: string, theirs: string): Merged {
  const baseLines = split(base);
  const a = hunks(base, mine);
  const b = hunks(base, theirs);
  const out: string[] = [];
  let conflicts = 0;
  let line = 0;
  let i = 0;
  let j = 0;
  const ensureNewline = (lines: string[]): string[] =>
    lines.map((l, k) => (k === lines.length - 1 && !l.endsWith("\n") ? `${l}\n` : l));
  while (i < a.length || j < b.length) {
    const ha = a[i];
    const hb = b[j];
    // Start at the earlier hunk; take in every hunk of either side that touches the
    // region, growing it, until none does.
    const first = (ha?.start ?? Infinity) <= (hb?.start ?? Infinity) ? ha! : hb!;
    let start = first.start;
    let end = first.end;
    const fromA: Hunk[] = [];
    const fromB: Hunk[] = [];
    let grew = true;
    while (grew) {
      grew = false;
      const na = a[i];
      if (na && touches(na, start, end, fromA.length + fromB.length === 0)) {
        fromA.push(na);
        end = Math.max(end, na.end);
        i++;
        grew = true;
      }
      const nb = b[j];
      if (nb && touches(nb, start, end, fromA.length + fromB.length === 0)) {
        fromB.push(nb);
        end = Math.max(end, nb.end);
        j++;
        grew = true;
      }
    }
    start = Math.min(...[...fromA, ...fromB].map((h) => h.start));
    out.push(...baseLines.slice(line, start));
    const side = (hs: Hunk[]): string[] => {
      const lines: string[] = [];
      let at = start;
      for (const h of hs) {
        lines.push(...baseLines.slice(at, h.start), ...h.lines);
        at = h.end;
      }
      lines.push(...baseLines.slice(at, end));
      return lines;
    };
    if (fromB.length === 0) out.push(...side(fromA));
    else if (fromA.length === 0) out.push(...side(fromB));
    else {
      const mineLines = side(fromA);
      const theirLines = side(fromB);
      if (mineLines.join("") === theirLines.join("")) out.push(...mineLines);
      else {
        conflicts++;
        out.push("<<<<<<< your edit\n", ...ensureNewline(mineLines), "=======\n", ...ensureNewline(theirLines), ">>>>>>> saved version\n");
      }
    }
    line = end;
  }
  out.push(...baseLines.slice(line));
  return { text: out.join(""), conflicts };
}

export interface DiffLine {
  kind: "same" | "added" | "removed";
  text: string;
  oldNo: number | null;
  newNo: number | null;
}

/** A line diff between two texts, for the history view. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const out: DiffLine[] = [];
  let oldNo = 1;
  let newNo = 1;
  for (const part of diffLines(before, after)) {
    for (const raw of split(part.value)) {
      const text = raw.replace(/\n$/, "");
      if (part.added) out.push({ kind: "added", text, oldNo: null, newNo: newNo++ });
      else if (part.removed) out.push({ kind: "removed", text, oldNo: oldNo++, newNo: null });
      else out.push({ kind: "same", text, oldNo: oldNo++, newNo: newNo++ });
    }
  }
  return out;
}
