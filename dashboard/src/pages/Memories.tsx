// Memory profiles (memIDs): the list (search, owner, item counts by type, the active
// switch) and a memory's page (its guardrails, preferences and facts with their expiry,
// add/edit/delete, retention, delete for good). Owners and admins see every memory of
// the organisation; only the viewer's own can be attached by their keys (x-mem-id
// resolves the calling key's owner's memories only), so only those offer the header
// snippet: a colleague's row says whose it is instead of a snippet that would do nothing.
import { useEffect, useState } from "preact/hooks";
import { ApiError, del, get, patch, post } from "../lib/api";
import { href, navigate } from "../lib/router";
import { me, type Me } from "../lib/session";
import { useStore } from "../lib/store";
import type { ItemType, Memory, MemoryDetail, MemoryItem, MemoryList } from "../lib/types";
import { CodeBlock, CopyButton } from "../ui/copy";
import { Confirm, Dialog } from "../ui/dialog";
import { ErrorBox } from "../ui/error";
import { whenEpoch } from "../ui/format";
import { toast } from "../ui/toast";

const TYPES: { type: ItemType; title: string; one: string; many: string; help: string }[] = [
  { type: "guardrail", title: "Guardrails", one: "guardrail", many: "guardrails", help: "Always sent, whole; never counted against the budget, never expired." },
  { type: "preference", title: "Preferences", one: "preference", many: "preferences", help: "Each has a key: with several memories attached, the left-most memory's value for a key wins." },
  { type: "fact", title: "Facts", one: "fact", many: "facts", help: "Embedded when added or edited; the ones closest to the latest user message are sent." },
];

const memPath = (m: Memory) => `/v1/memories/${encodeURIComponent(m.id)}`;

/** What the server lets the viewer do (domain/policy.py): owners edit any memory, admins
 * delete a colleague's but do not edit it, members manage their own. */
export function canEdit(who: Me | null | undefined, m: Memory): boolean {
  return m.attachable || who?.role === "owner";
}
export function canDelete(who: Me | null | undefined, m: Memory): boolean {
  return m.attachable || who?.role === "owner" || who?.role === "admin";
}

function countsText(counts: Record<string, number>): string {
  return TYPES.map((t) => `${counts[t.type] ?? 0} ${(counts[t.type] ?? 0) === 1 ? t.one : t.many}`).join(" · ");
}

function ownerText(m: Memory): string {
  return m.owner ?? m.owner_member_id;
}

function retentionText(days: number | null): string {
  return days === null ? "kept until deleted" : `preferences and facts expire ${days} day${days === 1 ? "" : "s"} after they were added`;
}

export function MemoriesPage(props: { memory: string | null }) {
  return props.memory ? <MemoryPage key={props.memory} memoryRef={props.memory} /> : <MemoryListPage />;
}

// ------------------------------------------------------------------ the list

function MemoryListPage() {
  const who = useStore(me);
  const [q, setQ] = useState("");
  const [rows, setRows] = useState<Memory[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [creating, setCreating] = useState(false);

  async function load(cursor: string | null, signal?: AbortSignal): Promise<void> {
    try {
      const page = await get<MemoryList>("/v1/memories", { query: { q: q.trim(), cursor, limit: 50 }, signal });
      setRows((old) => (cursor && old ? [...old, ...page.memories] : page.memories));
      setNext(page.next_cursor);
      setError(null);
    } catch (err) {
      if (err instanceof DOMException && err.name === "AbortError") return;
      setError(err);
    }
  }

  useEffect(() => {
    const abort = new AbortController();
    const timer = window.setTimeout(() => void load(null, abort.signal), q ? 160 : 0);
    return () => {
      window.clearTimeout(timer);
      abort.abort();
    };
  }, [q]);

  async function setActive(m: Memory, active: boolean): Promise<void> {
    try {
      const updated = await patch<MemoryDetail>(memPath(m), { active });
      setRows((list) => list?.map((x) => (x.id === m.id ? { ...x, active: updated.active } : x)) ?? null);
      toast(`${m.name} is ${updated.active ? "active" : "off: x-mem-id skips it"}.`, "success");
    } catch (err) {
      setError(err);
    }
  }

  const others = rows?.some((m) => !m.attachable);
  return (
    <section class="memories-page" aria-labelledby="memories-h">
      <div class="page-head">
        <h1 id="memories-h">Memory profiles</h1>
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          Create a memory
        </button>
      </div>
      <p class="muted">
        A memory profile is per end user or per use: attach it to a request with the <code>x-mem-id</code> header. Only memories you own
        attach to your keys' requests.
        {who?.role !== "member" ? " As an owner or admin you also see your colleagues' memories." : ""}
      </p>
      <form class="search-form" role="search" onSubmit={(e) => e.preventDefault()}>
        <label class="field grow">
          <span>Find a memory</span>
          <input type="search" value={q} onInput={(e) => setQ((e.target as HTMLInputElement).value)} placeholder="Slug or name…" autoComplete="off" />
        </label>
      </form>
      <ErrorBox error={error} />
      {rows && rows.length === 0 && <p class="muted">{q ? "No memory matches." : "No memory profiles yet. Create one to give an end user their own memory."}</p>}
      {rows && rows.length > 0 && (
        <div class="table-wrap">
          <table class="data memories">
            <thead>
              <tr>
                <th scope="col">Memory</th>
                <th scope="col">Owner</th>
                <th scope="col">Items</th>
                <th scope="col">Active</th>
                <th scope="col">Header</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((m) => {
                return (
                  <tr key={m.id} class={m.attachable ? "own" : "others"}>
                    <th scope="row">
                      <a href={href(`memories/${m.id}`)}>{m.name}</a>
                      <div class="muted small-text">
                        <code>{m.slug}</code>
                      </div>
                    </th>
                    <td>
                      {ownerText(m)}
                      {m.attachable ? <span class="badge">you</span> : <span class="badge warn">someone else's</span>}
                    </td>
                    <td class="item-counts">{countsText(m.item_counts)}</td>
                    <td>
                      <label class="switch">
                        <input
                          type="checkbox"
                          role="switch"
                          checked={m.active}
                          disabled={!canEdit(who, m)}
                          aria-label={`${m.name} active`}
                          title={canEdit(who, m) ? "" : "Only its owner (or an organisation owner) can change it"}
                          onChange={(e) => void setActive(m, (e.target as HTMLInputElement).checked)}
                        />
                        <span aria-hidden="true" />
                      </label>
                    </td>
                    <td class="header-cell">
                      {m.attachable ? (
                        <span class="mem-snippet">
                          <code>x-mem-id: {m.slug}</code>
                          <CopyButton text={`x-mem-id: ${m.slug}`} label={`Copy the x-mem-id header of ${m.name}`} />
                        </span>
                      ) : (
                        <span class="not-attachable">Owned by {ownerText(m)}: your keys cannot attach it</span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {others && (
        <p class="muted small-text">
          Rows marked “someone else's” belong to a colleague: you may read them, but <code>x-mem-id</code> resolves only memories owned by the
          calling key's owner, so they offer no header.
        </p>
      )}
      {next && (
        <button type="button" onClick={() => void load(next)}>
          Show more
        </button>
      )}
      <CreateMemory open={creating} onClose={() => setCreating(false)} />
    </section>
  );
}

function CreateMemory(props: { open: boolean; onClose: () => void }) {
  const [slug, setSlug] = useState("");
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [days, setDays] = useState("");
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (props.open) {
      setSlug("");
      setName("");
      setDescription("");
      setDays("");
      setError(null);
    }
  }, [props.open]);
  return (
    <Dialog open={props.open} title="Create a memory" onClose={props.onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const made = await post<MemoryDetail>("/v1/memories", {
              slug: slug.trim(),
              name: name.trim(),
              description,
              retention_days: days.trim() === "" ? null : Number(days),
            });
            props.onClose();
            navigate(`memories/${made.id}`);
          } catch (err) {
            setError(err);
          }
        }}
      >
        <label class="field">
          <span>Slug (the memID sent in x-mem-id; cannot change later)</span>
          <input value={slug} onInput={(e) => setSlug((e.target as HTMLInputElement).value)} required maxLength={64} placeholder="user-4711" autoFocus />
        </label>
        <label class="field">
          <span>Name</span>
          <input value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} required maxLength={200} placeholder="Ana (customer 4711)" />
        </label>
        <label class="field">
          <span>Description</span>
          <input value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
        </label>
        <label class="field">
          <span>Retention in days (empty: keep items until deleted)</span>
          <input type="number" min={1} value={days} onInput={(e) => setDays((e.target as HTMLInputElement).value)} />
        </label>
        <ErrorBox error={error} />
        <div class="dialog-actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="primary">
            Create
          </button>
        </div>
      </form>
    </Dialog>
  );
}

// ------------------------------------------------------------------ one memory

function MemoryPage(props: { memoryRef: string }) {
  const who = useStore(me);
  const [m, setM] = useState<MemoryDetail | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [missing, setMissing] = useState(false);
  const [editing, setEditing] = useState<MemoryItem | null>(null);
  const [removing, setRemoving] = useState<MemoryItem | null>(null);
  const [deleting, setDeleting] = useState(false);
  const path = `/v1/memories/${encodeURIComponent(props.memoryRef)}`;

  const load = () =>
    get<MemoryDetail>(path).then(
      (d) => {
        setM(d);
        setError(null);
      },
      (err: unknown) => {
        if (err instanceof ApiError && err.status === 404) setMissing(true);
        setError(err);
      },
    );
  useEffect(() => void load(), [props.memoryRef]);

  if (!m) {
    return (
      <section aria-labelledby="memory-h">
        <p>
          <a href={href("memories")}>← Memory profiles</a>
        </p>
        <h1 id="memory-h">{missing ? "No such memory" : "Memory"}</h1>
        {error ? <ErrorBox error={error} /> : <p class="muted">Loading…</p>}
      </section>
    );
  }

  const editable = canEdit(who, m);
  async function change(body: Record<string, unknown>, done: string): Promise<boolean> {
    try {
      setM(await patch<MemoryDetail>(path, body));
      setError(null);
      toast(done, "success");
      return true;
    } catch (err) {
      setError(err);
      return false;
    }
  }
  async function removeItem(item: MemoryItem): Promise<void> {
    setRemoving(null);
    try {
      await del(`${path}/items/${encodeURIComponent(item.id)}`);
      toast("Item deleted.", "success");
      await load();
    } catch (err) {
      setError(err);
    }
  }
  async function erase(): Promise<void> {
    setDeleting(false);
    try {
      await del(path);
      toast(`Deleted ${m?.name ?? "the memory"} with its items and their embeddings.`, "success");
      navigate("memories", { replace: true });
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section class="memory-page" aria-labelledby="memory-h">
      <p>
        <a href={href("memories")}>← Memory profiles</a>
      </p>
      <div class="page-head">
        <div>
          <h1 id="memory-h">{m.name}</h1>
          <p class="muted">
            <code>{m.slug}</code> · owned by {ownerText(m)}
            {m.attachable ? <span class="badge">you</span> : <span class="badge warn">someone else's</span>} · {countsText(m.item_counts)}
          </p>
        </div>
        <div class="toolbar">
          <label class="checkbox">
            <span class="switch">
              <input
                type="checkbox"
                role="switch"
                checked={m.active}
                disabled={!editable}
                aria-label="Active"
                onChange={(e) => {
                  const on = (e.target as HTMLInputElement).checked;
                  void change({ active: on }, on ? "Active again." : "Turned off: x-mem-id skips it.");
                }}
              />
              <span aria-hidden="true" />
            </span>
            Active
          </label>
          {canDelete(who, m) && (
            <button type="button" class="danger-outline" onClick={() => setDeleting(true)}>
              Delete memory
            </button>
          )}
        </div>
      </div>
      {m.description && <p>{m.description}</p>}
      <ErrorBox error={error} />
      {m.attachable ? (
        <div class="card">
          <CodeBlock label="Attach it to a request" code={`x-mem-id: ${m.slug}`} />
          <p class="muted small-text">
            Several memories: <code>x-mem-id: {m.slug},another-memory</code> (comma-separated, left-most wins). The answer's <code>x-memory-applied</code> lists
            the ones that contributed.
          </p>
        </div>
      ) : (
        <p class="notice not-attachable">
          This memory belongs to {ownerText(m)}. You may read it{editable ? " and edit it" : ""}
          {canDelete(who, m) ? (editable ? " or delete it" : " and delete it") : ""}, but your keys cannot attach it: <code>x-mem-id</code>{" "}
          resolves only memories owned by the calling key's owner.
        </p>
      )}
      <Retention memory={m} editable={editable} onSave={(days) => change({ retention_days: days }, "Retention saved.")} />
      {TYPES.map((t) => {
        const items = m.items.filter((i) => i.item_type === t.type);
        return (
          <section key={t.type} class="item-group" aria-labelledby={`group-${t.type}`}>
            <h2 id={`group-${t.type}`}>
              {t.title} <span class="count">{items.length}</span>
            </h2>
            <p class="muted small-text">{t.help}</p>
            {items.length === 0 ? (
              <p class="muted">None.</p>
            ) : (
              <ul class="items">
                {items.map((item) => (
                  <li key={item.id} class="item">
                    <div class="item-text">
                      {item.key && (
                        <span class="item-key">
                          <code>{item.key}</code>
                        </span>
                      )}
                      {item.text}
                    </div>
                    <div class="item-meta muted small-text">
                      added {whenEpoch(item.created_at)} · {item.expires_at === null ? "never expires" : `expires ${whenEpoch(item.expires_at)}`}
                      {item.item_type === "fact" && !item.embedded ? " · not embedded (embeddings off): never selected" : ""}
                    </div>
                    {editable && (
                      <div class="row-actions">
                        <button type="button" class="small" onClick={() => setEditing(item)} aria-label={`Edit ${t.one}: ${item.text.slice(0, 40)}`}>
                          Edit
                        </button>
                        <button type="button" class="small danger-outline" onClick={() => setRemoving(item)} aria-label={`Delete ${t.one}: ${item.text.slice(0, 40)}`}>
                          Delete
                        </button>
                      </div>
                    )}
                  </li>
                ))}
              </ul>
            )}
          </section>
        );
      })}
      {editable ? (
        <AddItem path={path} onAdded={() => void load()} />
      ) : (
        <p class="muted">Only its owner or an organisation owner can change this memory's items.</p>
      )}
      {editing && (
        <EditItem
          path={path}
          item={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            toast("Item saved.", "success");
            void load();
          }}
        />
      )}
      <Confirm
        open={removing !== null}
        title="Delete this item?"
        message={<p>“{removing?.text}” is removed from the memory.</p>}
        confirm="Delete item"
        danger
        onAnswer={(yes) => (yes && removing ? void removeItem(removing) : setRemoving(null))}
      />
      <Confirm
        open={deleting}
        title={`Delete ${m.name}?`}
        message={
          <p>
            This erases the memory <code>{m.slug}</code>, its {m.item_count} item{m.item_count === 1 ? "" : "s"} and their embeddings. It cannot be
            undone: requests naming it in <code>x-mem-id</code> go on without it.
          </p>
        }
        confirm="Delete for good"
        danger
        onAnswer={(yes) => (yes ? void erase() : setDeleting(false))}
      />
    </section>
  );
}

function Retention(props: { memory: MemoryDetail; editable: boolean; onSave: (days: number | null) => Promise<boolean> }) {
  const current = props.memory.retention_days;
  const [days, setDays] = useState(current === null ? "" : String(current));
  useEffect(() => setDays(current === null ? "" : String(current)), [current]);
  return (
    <form
      class="retention card"
      aria-labelledby="retention-h"
      onSubmit={(e) => {
        e.preventDefault();
        void props.onSave(days.trim() === "" ? null : Number(days));
      }}
    >
      <h2 id="retention-h">Retention</h2>
      <p>
        Now: {retentionText(current)}. Guardrails never expire; an expired item is no longer sent nor listed, and the nightly sweep deletes
        it.
      </p>
      <div class="field-row">
        <label class="field">
          <span>Days (empty: keep until deleted)</span>
          <input type="number" min={1} value={days} disabled={!props.editable} onInput={(e) => setDays((e.target as HTMLInputElement).value)} />
        </label>
      </div>
      <button type="submit" disabled={!props.editable}>
        Save retention
      </button>
    </form>
  );
}

function AddItem(props: { path: string; onAdded: () => void }) {
  const [type, setType] = useState<ItemType>("fact");
  const [key, setKey] = useState("");
  const [text, setText] = useState("");
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="add-item card"
      aria-labelledby="add-item-h"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          await post<MemoryItem>(`${props.path}/items`, { item_type: type, text, ...(type === "preference" ? { key: key.trim() } : {}) });
          setText("");
          setKey("");
          setError(null);
          toast("Item added.", "success");
          props.onAdded();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <h2 id="add-item-h">Add an item</h2>
      <div class="field-row">
        <label class="field">
          <span>Type</span>
          <select value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value as ItemType)}>
            {TYPES.map((t) => (
              <option key={t.type} value={t.type}>
                {t.one[0]?.toUpperCase()}
                {t.one.slice(1)}
              </option>
            ))}
          </select>
        </label>
        {type === "preference" && (
          <label class="field">
            <span>Key</span>
            <input value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} required maxLength={100} placeholder="tone" />
          </label>
        )}
      </div>
      <label class="field">
        <span>Text</span>
        <textarea value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} required maxLength={2000} rows={2} />
      </label>
      <ErrorBox error={error} prefix="Not added" />
      <button type="submit" class="primary">
        Add
      </button>
    </form>
  );
}

function EditItem(props: { path: string; item: MemoryItem; onClose: () => void; onSaved: () => void }) {
  const { item } = props;
  const [text, setText] = useState(item.text);
  const [key, setKey] = useState(item.key ?? "");
  const [error, setError] = useState<unknown>(null);
  return (
    <Dialog open title={`Edit this ${item.item_type}`} onClose={props.onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            await patch<MemoryItem>(`${props.path}/items/${encodeURIComponent(item.id)}`, {
              text,
              ...(item.item_type === "preference" ? { key: key.trim() } : {}),
            });
            props.onSaved();
          } catch (err) {
            setError(err);
          }
        }}
      >
        {item.item_type === "preference" && (
          <label class="field">
            <span>Key</span>
            <input value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} required maxLength={100} />
          </label>
        )}
        <label class="field">
          <span>Text</span>
          <textarea value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} required maxLength={2000} rows={3} autoFocus />
        </label>
        <p class="muted small-text">A type cannot change: delete the item and add it again.</p>
        <ErrorBox error={error} prefix="Not saved" />
        <div class="dialog-actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="primary">
            Save
          </button>
        </div>
      </form>
    </Dialog>
  );
}
