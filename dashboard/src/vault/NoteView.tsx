// One note: the editor beside its live preview, saved with the version it started from
// (If-Match), so a save that would overwrite someone else's is refused and offered as a
// choice (their version, a merge, or mine on purpose). Rename/move, delete with undo,
// history with diffs and restore, backlinks and outgoing links.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiError, call, describe, get, notePath, post } from "../lib/api";
import { withSession } from "../lib/reauth";
import { href, navigate, route } from "../lib/router";
import { useStore } from "../lib/store";
import type { Note, NoteSummary, Version, WriteOut } from "../lib/types";
import { Confirm, Dialog } from "../ui/dialog";
import { ago } from "../ui/format";
import { toast } from "../ui/toast";
import type { Editor, LinkTarget } from "./editor";
import { clearDraft, getDraft, moveDraft, setDraft } from "./drafts";
import { History } from "./History";
import { dropSummary, putSummary, resolver, vault, whenComplete } from "./index";
import { fold, folderOf, mayNameFile, nameKey, resolveLink, stem } from "./keys";
import { fetchLinks, followLinks, knownLinks, knownMissing, serverLinks } from "./links";
import { forgetPrefetched, openNote } from "./open";
import { fileName, isNotePath, vaultFiles } from "./files";
import { Preview } from "./Preview";

let editorModule: Promise<typeof import("./editor")> | null = null;
export const loadEditor = () => (editorModule ??= import("./editor"));

type Layout = "split" | "edit" | "preview";

const VECTOR_STATUS: Record<"indexed" | "pending" | "off", string> = {
  indexed: "Searchable by meaning: its passages are embedded with the server's model",
  pending: "Not searchable by meaning yet: waiting to be embedded (keyword search finds it already)",
  off: "Search by meaning is off on this server: keyword search only",
};
const LAYOUT_KEY = "memvault.layout";

function linkTargets(): LinkTarget[] {
  const { notes } = vault.value;
  const names = new Map<string, number>();
  for (const n of notes.values()) names.set(nameKey(n.path), (names.get(nameKey(n.path)) ?? 0) + 1);
  const out: LinkTarget[] = [];
  for (const n of notes.values()) {
    const clash = (names.get(nameKey(n.path)) ?? 0) > 1;
    out.push({ label: clash ? n.path.replace(/\.md$/, "") : stem(n.path), path: n.path });
  }
  // Attachments by their file name with its extension, as Obsidian offers them (the
  // path when two share a name).
  const files = vaultFiles.value.files;
  const fileNames = new Map<string, number>();
  for (const f of files.values()) fileNames.set(fold(fileName(f.path)), (fileNames.get(fold(fileName(f.path))) ?? 0) + 1);
  for (const f of files.values()) {
    const clash = (fileNames.get(fold(fileName(f.path))) ?? 0) > 1;
    out.push({ label: clash ? f.path : fileName(f.path), path: f.path, file: true });
  }
  return out;
}

const LINK_RE = /!?\[\[([^[\]\n]*)\]\]/g;

function outgoing(text: string, source: string, known: Map<string, string | null> | undefined): { target: string; path: string | null }[] {
  const seen = new Map<string, { target: string; path: string | null }>();
  const res = { ...resolver(), source, known };
  for (const m of text.matchAll(LINK_RE)) {
    const inner = m[1] ?? "";
    const target = (inner.split("|")[0] ?? "").split("#")[0]?.trim() ?? "";
    if (!target || seen.has(fold(target))) continue;
    seen.set(fold(target), { target, path: resolveLink(target, res) });
  }
  return [...seen.values()];
}

/** Where a dangling link leads: the note it would create, or, for a name with an
 * extension (![[missing.png]]), the page that offers to upload that file. */
const danglingTo = (target: string): string =>
  mayNameFile(fold(target.trim())) && !/\.md$/i.test(target.trim()) ? target.trim() : `${target.trim().replace(/\.md$/i, "")}.md`;

interface Conflict {
  theirs: Note;
}

export function NoteView(props: { path: string }) {
  const { path } = props;
  const index = useStore(vault);
  const [note, setNote] = useState<Note | null>(null);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [text, setText] = useState("");
  const [base, setBase] = useState<{ version: number; text: string }>({ version: 0, text: "" });
  const [saving, setSaving] = useState(false);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [backlinks, setBacklinks] = useState<NoteSummary[] | null>(null);
  const [dialog, setDialog] = useState<"rename" | "delete" | "history" | null>(null);
  const [layout, setLayout] = useState<Layout>((localStorage.getItem(LAYOUT_KEY) as Layout) || "split");
  const [topLine, setTopLine] = useState<number | undefined>(undefined);
  // ?at=<offset>: a search hit's matched passage (an offset in code points, as the API
  // counts), shown at its heading in the preview and under the cursor in the editor.
  const at = useStore(route).query.get("at");
  const [matchLine, setMatchLine] = useState<number | undefined>(undefined);
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<Editor | null>(null);
  const state = useRef({ text, base, path, saving });
  state.current = { text, base, path, saving };
  const opened = useRef<string | null>(null);
  const dirty = text !== base.text;

  // The note's GET starts in the render that shows a new path (or earlier, when a press
  // on its link prefetched it), not in an effect that waits for the next paint.
  const loading = useMemo(() => openNote(path), [path]);

  // Load the note (and the editor, in parallel) whenever the path changes; the backlinks
  // once the note is in, so its request has the server to itself.
  useEffect(() => {
    let live = true;
    setNote(null);
    setMissing(false);
    setError(null);
    setBacklinks(null);
    setConflict(null);
    opened.current = null;
    void loadEditor();
    const loadBacklinks = () =>
      get<NoteSummary[]>(`/v1/notes/${notePath(path)}/backlinks`).then(
        (list) => live && setBacklinks(list),
        () => live && setBacklinks([]),
      );
    loading.then(
      (found) => {
        if (!live) return;
        const draft = getDraft(path);
        setNote(found);
        setBase(draft ? { version: draft.baseVersion, text: draft.baseText } : { version: found.version, text: found.markdown });
        setText(draft ? draft.text : found.markdown);
        opened.current = path;
        void loadBacklinks();
      },
      async (err: unknown) => {
        if (!live) return;
        if (err instanceof ApiError && err.status === 404) {
          // A link followed before the vault's index had its note, and that the server
          // could not resolve either (it had not answered, or it found the link dangling
          // to a note made since), dangles to the root; once the index is in, the same
          // name may resolve to the note it meant. One the server found dangling is a
          // note to create at once.
          if (!vault.value.complete && !getDraft(path) && !knownMissing(path)) {
            await whenComplete();
            if (!live) return;
            const meant = resolveLink(path.replace(/\.md$/i, ""), resolver());
            if (meant && fold(meant) !== fold(path)) {
              navigate(`vault/${meant}`, { replace: true, sameOpening: true });
              return;
            }
          }
          const draft = getDraft(path);
          setMissing(true);
          setBase({ version: 0, text: draft?.baseText ?? "" });
          setText(draft?.text ?? `# ${stem(path)}\n\n`);
          opened.current = path;
          void loadBacklinks();
        } else setError(describe(err));
      },
    );
    return () => {
      live = false;
    };
  }, [path]);

  // Mount the editor once the note's text is known; replace its text on a new note.
  const ready = note !== null || missing;
  useEffect(() => {
    if (!ready || !host.current) return undefined;
    let live = true;
    void loadEditor().then(({ createEditor }) => {
      if (!live || !host.current) return;
      if (editor.current) {
        editor.current.replace(state.current.text);
        return;
      }
      editor.current = createEditor(host.current, {
        doc: state.current.text,
        label: `Markdown of ${path}`,
        onChange: (next) => setText(next),
        onSave: () => void save(),
        onTopLine: (line) => setTopLine(line),
        linkTargets,
      });
      jumpToMatch();
    });
    return () => {
      live = false;
    };
  }, [ready, path]);

  useEffect(() => () => editor.current?.destroy(), []);

  function jumpToMatch(): void {
    const offset = Number(at);
    if (at === null || !Number.isInteger(offset) || offset < 0) {
      setMatchLine(undefined);
      return;
    }
    const current = state.current.text;
    const index = Math.min(current.length, Array.from(current).slice(0, offset).join("").length);
    const line = current.slice(0, index).split("\n").length - 1;
    setMatchLine(line);
    const view = editor.current?.view;
    if (view) view.dispatch({ selection: { anchor: Math.min(index, view.state.doc.length) }, scrollIntoView: true });
  }
  useEffect(() => {
    if (editor.current && opened.current === path) jumpToMatch();
  }, [at]);

  // Keep a draft of an edit that differs from the version it started from.
  useEffect(() => {
    if (opened.current !== path) return;
    setDraft({ path, text, baseVersion: base.version, baseText: base.text });
  }, [text, base, path]);

  // Mod-s anywhere in the note view saves, not only inside the editor.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") {
        event.preventDefault();
        void save();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  async function save(force?: { version: number }): Promise<void> {
    const { text: current, base: from, path: at, saving: busy } = state.current;
    if (busy) return;
    if (current === from.text && from.version > 0 && !force) return;
    setSaving(true);
    const version = force?.version ?? from.version;
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (version > 0) headers["If-Match"] = `"${version}"`;
    else headers["If-None-Match"] = "*";
    try {
      const answer = await withSession(() =>
        call<WriteOut>("PUT", `/v1/notes/${notePath(at)}`, { headers, body: JSON.stringify({ markdown: current }) }),
      );
      const saved = answer.data.note;
      forgetPrefetched();
      putSummary(saved);
      followLinks(at, fetchLinks(at)); // links written since it was opened
      setBase({ version: saved.version, text: current });
      setMissing(false);
      setNote((n) => ({ ...(n ?? ({ markdown: current, frontmatter: {}, frontmatter_error: null, links: [] } as unknown as Note)), ...saved, markdown: current }));
      clearDraft(at);
      toast(answer.data.message, "success");
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        try {
          const theirs = await get<Note>(`/v1/notes/${notePath(at)}`);
          setConflict({ theirs });
        } catch (inner) {
          if (inner instanceof ApiError && inner.status === 404) {
            toast("The note was deleted meanwhile; saving creates it again.", "error");
            setBase({ version: 0, text: from.text });
          } else toast(describe(inner), "error");
        }
      } else toast(`Not saved: ${describe(err)}`, "error");
    } finally {
      setSaving(false);
    }
  }

  async function resolveConflict(choice: "mine" | "theirs" | "merge"): Promise<void> {
    if (!conflict) return;
    const theirs = conflict.theirs;
    setConflict(null);
    if (choice === "theirs") {
      setBase({ version: theirs.version, text: theirs.markdown });
      setText(theirs.markdown);
      editor.current?.replace(theirs.markdown);
      setNote(theirs);
      toast(`Showing version ${theirs.version}; your edit was discarded.`);
    } else if (choice === "merge") {
      const { merge3 } = await import("./merge");
      const merged = merge3(state.current.base.text, state.current.text, theirs.markdown);
      setBase({ version: theirs.version, text: theirs.markdown });
      setText(merged.text);
      editor.current?.replace(merged.text);
      setNote(theirs);
      toast(
        merged.conflicts
          ? `Merged with version ${theirs.version}: ${merged.conflicts} conflicting part(s) are marked <<<<<<< in the editor. Settle them, then save.`
          : `Merged with version ${theirs.version}. Review it, then save.`,
        merged.conflicts ? "error" : "info",
        undefined,
        9000,
      );
    } else {
      await save({ version: theirs.version });
    }
  }

  async function rename(to: string): Promise<void> {
    const target = to.trim().endsWith(".md") ? to.trim() : `${to.trim()}.md`;
    const headers: Record<string, string> = {};
    if (base.version > 0) headers["If-Match"] = `"${base.version}"`;
    try {
      const moved = await withSession(() =>
        call<NoteSummary>("POST", `/v1/notes/${notePath(path)}/move`, { json: { to: target }, headers }),
      );
      putSummary(moved.data, path);
      moveDraft(path, moved.data.path);
      setDialog(null);
      const rewritten = backlinks?.length ?? 0;
      toast(`Moved to ${moved.data.path}${rewritten ? `; links in ${rewritten} note(s) rewritten` : ""}.`, "success");
      navigate(`vault/${moved.data.path}`, { replace: true });
    } catch (err) {
      toast(`Not moved: ${describe(err)}`, "error");
    }
  }

  async function remove(): Promise<void> {
    setDialog(null);
    const headers: Record<string, string> = {};
    if (base.version > 0) headers["If-Match"] = `"${base.version}"`;
    try {
      await withSession(() => call("DELETE", `/v1/notes/${notePath(path)}`, { headers }));
      dropSummary(path);
      clearDraft(path);
      const deleted = path;
      toast(`Deleted ${deleted}.`, "info", { label: "Undo", run: () => void undoDelete(deleted) });
      navigate("vault", { replace: true });
    } catch (err) {
      toast(`Not deleted: ${describe(err)}`, "error");
    }
  }

  async function undoDelete(deleted: string): Promise<void> {
    try {
      const versions = await get<Version[]>(`/v1/notes/${notePath(deleted)}/versions`);
      const last = versions.reduce((a, b) => (b.version > a.version ? b : a));
      const out = await post<WriteOut>(`/v1/notes/${notePath(deleted)}/versions/${last.version}/restore`);
      putSummary(out.note);
      toast(`Restored ${deleted} from its history.`, "success");
      navigate(`vault/${out.note.path}`);
    } catch (err) {
      toast(`Could not undo: ${describe(err)}`, "error");
    }
  }

  async function restored(): Promise<void> {
    setDialog(null);
    const fresh = await get<Note>(`/v1/notes/${notePath(path)}`);
    putSummary(fresh);
    setNote(fresh);
    setBase({ version: fresh.version, text: fresh.markdown });
    setText(fresh.markdown);
    editor.current?.replace(fresh.markdown);
    clearDraft(path);
  }

  const told = useStore(serverLinks);
  const attachments = useStore(vaultFiles);
  const links = useMemo(() => outgoing(text, path, knownLinks(path)), [text, index.revision, attachments.revision, told, path]);
  const onRendered = () => {
    if (!ready || opened.current !== path || performance.getEntriesByName("mv:navigate").length === 0) return;
    // A figure for the bench: from the click to the frame that paints the preview (the
    // HTML is in the DOM now; the task after the next animation frame follows its paint).
    requestAnimationFrame(() =>
      setTimeout(() => {
        try {
          performance.measure("mv:note-open", "mv:navigate");
          performance.clearMarks("mv:navigate");
        } catch {
          // no start mark: opened by a page load, not a click
        }
      }, 0),
    );
  };

  if (error) {
    return (
      <section class="note-view" aria-label="Note">
        <p class="error-text" role="alert">
          {error}
        </p>
      </section>
    );
  }

  const title = note?.title ?? stem(path);
  const status = saving ? "Saving…" : missing ? "Not saved yet" : dirty ? "Unsaved changes" : `Saved · version ${base.version}`;
  const folder = folderOf(path);
  return (
    <section class="note-view" aria-label={`Note ${title}`}>
      <header class="note-header">
        <div class="note-title">
          <h1>{title}</h1>
          <div class="note-meta">
            <span class="note-path">
              {folder ? `${folder}/` : ""}
              <strong>{path.split("/").pop()}</strong>
            </span>
            <span class={`save-status${dirty ? " dirty" : ""}`} role="status" aria-live="polite">
              {status}
            </span>
            {note && !dirty && <span class="muted">updated {ago(note.updated_at)}</span>}
            {note?.vector_status && (
              <span class={`vector-status muted status-${note.vector_status}`} title={VECTOR_STATUS[note.vector_status]}>
                vectors: {note.vector_status}
              </span>
            )}
          </div>
        </div>
        <div class="toolbar" role="toolbar" aria-label="Note actions">
          <div class="segmented" role="group" aria-label="Layout">
            {(["edit", "split", "preview"] as Layout[]).map((l) => (
              <button
                type="button"
                key={l}
                aria-pressed={layout === l}
                onClick={() => {
                  setLayout(l);
                  localStorage.setItem(LAYOUT_KEY, l);
                }}
              >
                {l === "edit" ? "Editor" : l === "split" ? "Split" : "Preview"}
              </button>
            ))}
          </div>
          <button type="button" onClick={() => setDialog("history")} disabled={missing}>
            History
          </button>
          <button type="button" onClick={() => setDialog("rename")} disabled={missing}>
            Rename / move
          </button>
          <button type="button" class="danger-outline" onClick={() => setDialog("delete")} disabled={missing}>
            Delete
          </button>
          <button type="button" class="primary" onClick={() => void save()} disabled={saving || (!dirty && !missing)} title="Save (Ctrl+S)">
            {missing ? "Create" : "Save"}
          </button>
        </div>
      </header>
      {missing && (
        <p class="notice">
          There is no note at <code>{path}</code> yet. Write it and press <kbd>Ctrl</kbd>+<kbd>S</kbd> to create it.
        </p>
      )}
      <div class={`note-body layout-${layout}`}>
        <div class="editor-pane" ref={host} hidden={layout === "preview"}>
          {!ready && <p class="muted pad">Loading…</p>}
        </div>
        <div class="preview-pane" hidden={layout === "edit"} tabIndex={0} aria-label="Preview">
          {ready && <Preview source={path} text={text} onRendered={onRendered} topLine={layout === "split" ? topLine : undefined} matchLine={matchLine} />}
        </div>
      </div>
      <footer class="links-panel">
        <section aria-labelledby="backlinks-h">
          <h2 id="backlinks-h">Backlinks {backlinks && <span class="count">{backlinks.length}</span>}</h2>
          {backlinks === null ? (
            <p class="muted">Loading…</p>
          ) : backlinks.length === 0 ? (
            <p class="muted">No note links here.</p>
          ) : (
            <ul>
              {backlinks.map((b) => (
                <li key={b.path}>
                  <a href={href(`vault/${b.path}`)}>{b.title}</a> <span class="muted">{b.path}</span>
                </li>
              ))}
            </ul>
          )}
        </section>
        <section aria-labelledby="outgoing-h">
          <h2 id="outgoing-h">
            Outgoing links <span class="count">{links.length}</span>
          </h2>
          {links.length === 0 ? (
            <p class="muted">This note links nowhere.</p>
          ) : (
            <ul>
              {links.map((l) => (
                <li key={l.target}>
                  {l.path ? (
                    <a href={href(`vault/${l.path}`)}>
                      {l.target}
                      {!isNotePath(l.path) && <span class="muted"> (file)</span>}
                    </a>
                  ) : (
                    <a class="dangling" href={href(`vault/${danglingTo(l.target)}`)}>
                      {l.target} <span class="muted">{isNotePath(danglingTo(l.target)) ? "(no note yet)" : "(no file yet)"}</span>
                    </a>
                  )}
                </li>
              ))}
            </ul>
          )}
        </section>
      </footer>

      <Dialog open={conflict !== null} title="This note changed while you edited it" onClose={() => setConflict(null)} wide>
        {conflict && (
          <div class="conflict">
            <p>
              You edited version {base.version}; version {conflict.theirs.version} was saved meanwhile (
              {ago(conflict.theirs.updated_at)}). Nothing was overwritten.
            </p>
            <div class="conflict-columns">
              <div>
                <h3>Saved version {conflict.theirs.version}</h3>
                <pre class="conflict-text" tabIndex={0}>{conflict.theirs.markdown}</pre>
              </div>
              <div>
                <h3>Your edit</h3>
                <pre class="conflict-text" tabIndex={0}>{text}</pre>
              </div>
            </div>
            <div class="dialog-actions">
              <button type="button" onClick={() => void resolveConflict("theirs")}>
                Take version {conflict.theirs.version}
              </button>
              <button type="button" class="danger-outline" onClick={() => void resolveConflict("mine")}>
                Save mine over it
              </button>
              <button type="button" class="primary" onClick={() => void resolveConflict("merge")}>
                Merge both
              </button>
            </div>
          </div>
        )}
      </Dialog>

      <RenameDialog open={dialog === "rename"} path={path} onClose={() => setDialog(null)} onRename={rename} backlinks={backlinks?.length ?? 0} />
      <Confirm
        open={dialog === "delete"}
        title={`Delete ${stem(path)}?`}
        message={
          <p>
            <code>{path}</code> leaves the vault and search. Its history stays, so you can undo this or restore it later.
          </p>
        }
        confirm="Delete"
        danger
        onAnswer={(yes) => (yes ? void remove() : setDialog(null))}
      />
      {dialog === "history" && note && (
        <History path={path} currentVersion={base.version} dirty={dirty} onClose={() => setDialog(null)} onRestored={restored} />
      )}
    </section>
  );
}

function RenameDialog(props: { open: boolean; path: string; backlinks: number; onClose: () => void; onRename: (to: string) => Promise<void> }) {
  const [to, setTo] = useState(props.path);
  const [busy, setBusy] = useState(false);
  useEffect(() => setTo(props.path), [props.path, props.open]);
  return (
    <Dialog open={props.open} title="Rename or move" onClose={props.onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          try {
            await props.onRename(to);
          } finally {
            setBusy(false);
          }
        }}
      >
        <label class="field">
          <span>New path</span>
          <input value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} required autoFocus spellcheck={false} />
        </label>
        <p class="muted">
          Folders are separated by <code>/</code>.{" "}
          {props.backlinks > 0
            ? `Links in ${props.backlinks} note(s) that point here are rewritten to the new path.`
            : "No note links here, so no link needs rewriting."}
        </p>
        <div class="dialog-actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy || !to.trim() || to.trim() === props.path}>
            Move
          </button>
        </div>
      </form>
    </Dialog>
  );
}
