// The folder tree, virtualised: only the rows in view (plus a margin) are in the DOM, so
// 25,000 notes scroll as smoothly as 25. A WAI-ARIA tree with one tab stop: arrows move,
// Right/Left open and close folders, Enter opens a note, Home/End jump.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { href } from "../lib/router";
import type { NoteSummary } from "../lib/types";
import { fileName, fileType, type FileType, type VaultFile } from "./files";
import { fold, folderOf, stem } from "./keys";

export interface Row {
  kind: "folder" | "note" | "file";
  path: string; // folder path (no trailing slash), note path or attachment path
  label: string;
  depth: number;
  expanded?: boolean;
  count?: number;
  /** An attachment's type (its icon). */
  type?: FileType;
}

interface FolderNode {
  name: string;
  path: string;
  folders: Map<string, FolderNode>;
  notes: NoteSummary[];
  files: VaultFile[];
  total: number;
}

// Each attachment type's mark in the tree (text glyphs every font has: no emoji font
// needed); the row's title and label carry the file name with its extension.
const ICONS: Record<FileType, string> = { image: "▨", svg: "◇", audio: "♪", video: "▶", pdf: "▤", text: "≡", other: "▫" };

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

export function buildTree(notes: Iterable<NoteSummary>, files: Iterable<VaultFile> = []): FolderNode {
  const root: FolderNode = { name: "", path: "", folders: new Map(), notes: [], files: [], total: 0 };
  const folderFor = (path: string): FolderNode => {
    let node = root;
    node.total++;
    const parts = path.split("/");
    parts.pop();
    let at = "";
    for (const part of parts) {
      at = at ? `${at}/${part}` : part;
      const key = fold(part);
      let child = node.folders.get(key);
      if (!child) {
        child = { name: part, path: at, folders: new Map(), notes: [], files: [], total: 0 };
        node.folders.set(key, child);
      }
      child.total++;
      node = child;
    }
    return node;
  };
  for (const note of notes) folderFor(note.path).notes.push(note);
  for (const file of files) folderFor(file.path).files.push(file);
  return root;
}

export function flatten(root: FolderNode, expanded: Set<string>): Row[] {
  const rows: Row[] = [];
  const walk = (node: FolderNode, depth: number) => {
    const folders = [...node.folders.values()].sort((a, b) => collator.compare(a.name, b.name));
    for (const f of folders) {
      const open = expanded.has(fold(f.path));
      rows.push({ kind: "folder", path: f.path, label: f.name, depth, expanded: open, count: f.total });
      if (open) walk(f, depth + 1);
    }
    // Notes and attachments together by name, as Obsidian lists a folder.
    const items: Row[] = node.notes.map((n) => ({ kind: "note", path: n.path, label: stem(n.path), depth }));
    for (const f of node.files) items.push(fileRow(f.path, depth));
    items.sort((a, b) => collator.compare(a.label, b.label));
    for (const item of items) rows.push(item);
  };
  walk(root, 0);
  return rows;
}

export const fileRow = (path: string, depth: number): Row => ({ kind: "file", path, label: fileName(path), depth, type: fileType(path) });

const ROW = 28;
const MARGIN = 12;

export function Tree(props: {
  rows: Row[];
  current: string | null;
  dirty: Set<string>;
  label: string;
  onToggle: (folder: string, open?: boolean) => void;
}) {
  const { rows } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [height, setHeight] = useState(600);
  const currentKey = props.current ? fold(props.current) : null;
  const currentIndex = useMemo(
    () => (currentKey ? rows.findIndex((r) => r.kind !== "folder" && fold(r.path) === currentKey) : -1),
    [rows, currentKey],
  );
  const [focus, setFocus] = useState(0);
  const wantFocus = useRef(false);

  useEffect(() => {
    if (currentIndex >= 0) setFocus(currentIndex);
  }, [currentIndex]);

  useEffect(() => {
    const el = scroller.current;
    if (!el) return undefined;
    const observer = new ResizeObserver(() => setHeight(el.clientHeight));
    observer.observe(el);
    setHeight(el.clientHeight);
    return () => observer.disconnect();
  }, []);

  // Keep the open note in view when it is opened from elsewhere (search, a link).
  useEffect(() => {
    const el = scroller.current;
    if (!el || currentIndex < 0) return;
    const y = currentIndex * ROW;
    if (y < el.scrollTop || y + ROW > el.scrollTop + el.clientHeight) el.scrollTop = Math.max(0, y - el.clientHeight / 2);
  }, [currentIndex]);

  const focusIndex = Math.min(focus, Math.max(0, rows.length - 1));
  const first = Math.max(0, Math.floor(top / ROW) - MARGIN);
  const last = Math.min(rows.length, Math.ceil((top + height) / ROW) + MARGIN);

  useLayoutEffect(() => {
    if (!wantFocus.current) return;
    wantFocus.current = false;
    scroller.current?.querySelector<HTMLElement>(`[data-index="${focusIndex}"]`)?.focus({ preventScroll: true });
  });

  const move = (to: number) => {
    const index = Math.max(0, Math.min(rows.length - 1, to));
    setFocus(index);
    wantFocus.current = true;
    const el = scroller.current;
    if (el) {
      const y = index * ROW;
      if (y < el.scrollTop) el.scrollTop = y;
      else if (y + ROW > el.scrollTop + el.clientHeight) el.scrollTop = y + ROW - el.clientHeight;
      setTop(el.scrollTop);
    }
  };

  const onKey = (event: KeyboardEvent) => {
    const row = rows[focusIndex];
    if (!row) return;
    const page = Math.max(1, Math.floor(height / ROW) - 1);
    switch (event.key) {
      case "ArrowDown":
        move(focusIndex + 1);
        break;
      case "ArrowUp":
        move(focusIndex - 1);
        break;
      case "PageDown":
        move(focusIndex + page);
        break;
      case "PageUp":
        move(focusIndex - page);
        break;
      case "Home":
        move(0);
        break;
      case "End":
        move(rows.length - 1);
        break;
      case "ArrowRight":
        if (row.kind === "folder" && !row.expanded) props.onToggle(row.path, true);
        else if (row.kind === "folder") move(focusIndex + 1);
        break;
      case "ArrowLeft":
        if (row.kind === "folder" && row.expanded) props.onToggle(row.path, false);
        else {
          const parent = row.kind === "folder" ? folderOf(row.path) : folderOf(row.path);
          const at = rows.findIndex((r) => r.kind === "folder" && r.path === parent);
          if (at >= 0) move(at);
        }
        break;
      case "Enter":
      case " ":
        if (row.kind === "folder") props.onToggle(row.path);
        else if (event.key === " ") (event.target as HTMLElement).click();
        else return; // the link follows itself
        break;
      default:
        return;
    }
    event.preventDefault();
  };

  const visible = rows.slice(first, last);
  return (
    <div
      class="tree-scroll"
      ref={scroller}
      onScroll={(e) => setTop((e.currentTarget as HTMLDivElement).scrollTop)}
    >
      <div
        class="tree"
        role="tree"
        aria-label={props.label}
        style={{ height: `${rows.length * ROW}px` }}
        onKeyDown={onKey}
      >
        {visible.map((row, k) => {
          const index = first + k;
          const style = { transform: `translateY(${index * ROW}px)`, paddingLeft: `${8 + row.depth * 14}px` };
          const common = {
            "data-index": index,
            tabIndex: index === focusIndex ? 0 : -1,
            "aria-level": row.depth + 1,
            onFocus: () => setFocus(index),
          };
          if (row.kind === "folder") {
            return (
              <div
                key={`f:${row.path}`}
                role="treeitem"
                aria-expanded={row.expanded}
                class="tree-row folder"
                style={style}
                {...common}
                onClick={() => props.onToggle(row.path)}
              >
                <span class="chevron" aria-hidden="true">
                  {row.expanded ? "▾" : "▸"}
                </span>
                <span class="tree-label">{row.label}</span>
                <span class="tree-count" aria-label={`${row.count} notes and files`}>
                  {row.count}
                </span>
              </div>
            );
          }
          const selected = index === currentIndex;
          const dirty = props.dirty.has(fold(row.path));
          return (
            <a
              key={`n:${row.path}`}
              role="treeitem"
              aria-selected={selected}
              aria-current={selected ? "page" : undefined}
              class={`tree-row ${row.kind}${selected ? " selected" : ""}`}
              style={style}
              href={href(`vault/${row.path}`)}
              title={row.path}
              data-type={row.type}
              {...common}
            >
              {row.type && (
                <span class="file-icon" aria-hidden="true">
                  {ICONS[row.type]}
                </span>
              )}
              <span class="tree-label">{row.label}</span>
              {dirty && (
                <span class="dirty-dot" title="Unsaved changes">
                  <span class="sr-only">(unsaved)</span>●
                </span>
              )}
            </a>
          );
        })}
      </div>
    </div>
  );
}
