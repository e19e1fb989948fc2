// API keys: create (the secret shown once, with ready-to-paste snippets), the toggles
// (recall, tools, mcp), recall settings and spend cap, revoke.
import { useEffect, useState } from "preact/hooks";
import { ApiError, del, describe, get, patch, post } from "../lib/api";
import { apiRoot } from "../lib/env";
import type { Key, KeyCreated } from "../lib/types";
import { Confirm, Dialog } from "../ui/dialog";
import { CodeBlock, CopyButton } from "../ui/copy";
import { usd, when } from "../ui/format";
import { toast } from "../ui/toast";

const base = () => new URL(apiRoot, location.origin).toString().replace(/\/$/, "");

export function snippets(secret: string): { label: string; code: string }[] {
  const root = base();
  return [
    {
      label: "OpenAI SDK (Python)",
      code: `from openai import OpenAI\n\nclient = OpenAI(base_url="${root}/v1", api_key="${secret}")\nclient.chat.completions.create(\n    model="gpt-4o-mini",\n    messages=[{"role": "user", "content": "What do my notes say about the launch?"}],\n)`,
    },
    {
      label: "Anthropic SDK (Python)",
      code: `from anthropic import Anthropic\n\nclient = Anthropic(base_url="${root}", api_key="${secret}")\nclient.messages.create(\n    model="claude-haiku-4-5",\n    max_tokens=512,\n    messages=[{"role": "user", "content": "What do my notes say about the launch?"}],\n)`,
    },
    {
      label: "curl",
      code: `curl -s "${root}/v1/search?q=launch" \\\n  -H "Authorization: Bearer ${secret}"`,
    },
    {
      label: "MCP client config",
      code: JSON.stringify({ mcpServers: { memvault: { type: "http", url: `${root}/mcp`, headers: { Authorization: `Bearer ${secret}` } } } }, null, 2),
    },
  ];
}

interface Draft {
  name: string;
  recall: boolean;
  tools: boolean;
  mcp: boolean;
  admin: boolean;
  recall_notes: number;
  recall_tokens: number;
  cap: string; // dollars, "" for none
}

const FRESH: Draft = { name: "", recall: true, tools: true, mcp: false, admin: false, recall_notes: 5, recall_tokens: 2000, cap: "" };

function capMicros(cap: string): number | null {
  const n = Number(cap);
  return cap.trim() === "" || !Number.isFinite(n) ? null : Math.round(n * 1_000_000);
}

export function KeysPage() {
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<KeyCreated | null>(null);
  const [editing, setEditing] = useState<Key | null>(null);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const [showRevoked, setShowRevoked] = useState(false);

  const load = () =>
    get<Key[]>("/v1/keys").then(setKeys, (err: unknown) =>
      setError(err instanceof ApiError && err.status === 403 ? "Only admins manage keys." : describe(err)),
    );
  useEffect(() => void load(), []);

  async function toggle(key: Key, field: "recall" | "tools" | "mcp", on: boolean): Promise<void> {
    try {
      const updated = await patch<Key>(`/v1/keys/${key.id}`, { [field]: on });
      setKeys((list) => list?.map((k) => (k.id === key.id ? updated : k)) ?? null);
    } catch (err) {
      toast(describe(err), "error");
    }
  }

  async function revoke(key: Key): Promise<void> {
    setRevoking(null);
    try {
      await del(`/v1/keys/${key.id}`);
      toast(`Revoked ${key.name}. Requests with it are refused from now on.`, "success");
      void load();
    } catch (err) {
      toast(describe(err), "error");
    }
  }

  const shown = keys?.filter((k) => showRevoked || !k.revoked_at) ?? [];
  return (
    <section class="keys-page" aria-labelledby="keys-h">
      <div class="page-head">
        <h1 id="keys-h">API keys</h1>
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          Create a key
        </button>
      </div>
      <p class="muted">
        A key reaches the vault's REST API; its toggles add recall before a request, the memory tools, and MCP. Secrets are shown
        once, when created.
      </p>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      <label class="checkbox">
        <input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked((e.target as HTMLInputElement).checked)} /> Show
        revoked keys
      </label>
      {keys && (
        <div class="table-wrap">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Recall</th>
                <th scope="col">Tools</th>
                <th scope="col">MCP</th>
                <th scope="col">Recall settings</th>
                <th scope="col">Spent / cap</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((k) => (
                <tr key={k.id} class={k.revoked_at ? "revoked" : ""}>
                  <th scope="row">
                    {k.name} {k.admin && <span class="badge">admin</span>}
                    {k.revoked_at && <span class="badge danger">revoked</span>}
                  </th>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  {(["recall", "tools", "mcp"] as const).map((field) => (
                    <td key={field}>
                      <label class="switch">
                        <input
                          type="checkbox"
                          role="switch"
                          checked={k[field]}
                          disabled={Boolean(k.revoked_at)}
                          aria-label={`${field} for ${k.name}`}
                          onChange={(e) => void toggle(k, field, (e.target as HTMLInputElement).checked)}
                        />
                        <span aria-hidden="true" />
                      </label>
                    </td>
                  ))}
                  <td>
                    {k.recall_notes} notes · {k.recall_tokens} tokens
                  </td>
                  <td>
                    {usd(k.spent_micros)} / {k.spend_cap_micros === null ? "no cap" : usd(k.spend_cap_micros)}
                  </td>
                  <td>{when(k.created_at)}</td>
                  <td class="row-actions">
                    {!k.revoked_at && (
                      <>
                        <button type="button" class="small" onClick={() => setEditing(k)} aria-label={`Settings of ${k.name}`}>
                          Settings
                        </button>
                        <button type="button" class="small danger-outline" onClick={() => setRevoking(k)} aria-label={`Revoke ${k.name}`}>
                          Revoke
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <CreateKey
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(k) => {
          setCreating(false);
          setCreated(k);
          void load();
        }}
      />
      <Dialog open={created !== null} title="Your new key" onClose={() => setCreated(null)} wide>
        {created && (
          <div class="secret">
            <p>
              <strong>Copy it now:</strong> this is the only time the secret is shown. memvault keeps only a hash of it.
            </p>
            <div class="secret-line">
              <code class="secret-value" id="new-secret">
                {created.secret}
              </code>
              <CopyButton text={created.secret} label="Copy the secret" target={() => document.getElementById("new-secret")} />
            </div>
            {snippets(created.secret).map((s) => (
              <CodeBlock key={s.label} label={s.label} code={s.code} />
            ))}
            <div class="dialog-actions">
              <button type="button" class="primary" onClick={() => setCreated(null)}>
                I have copied it
              </button>
            </div>
          </div>
        )}
      </Dialog>
      {editing && (
        <KeySettings
          keyRow={editing}
          onClose={() => setEditing(null)}
          onSaved={(k) => {
            setEditing(null);
            setKeys((list) => list?.map((x) => (x.id === k.id ? k : x)) ?? null);
          }}
        />
      )}
      <Confirm
        open={revoking !== null}
        title={`Revoke ${revoking?.name ?? ""}?`}
        message={<p>Every request with this key is refused from now on. This cannot be undone; create a new key instead.</p>}
        confirm="Revoke"
        danger
        onAnswer={(yes) => (yes && revoking ? void revoke(revoking) : setRevoking(null))}
      />
    </section>
  );
}

function CreateKey(props: { open: boolean; onClose: () => void; onCreated: (k: KeyCreated) => void }) {
  const [d, setD] = useState<Draft>(FRESH);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (props.open) {
      setD(FRESH);
      setError(null);
    }
  }, [props.open]);
  const set = (patchIn: Partial<Draft>) => setD((old) => ({ ...old, ...patchIn }));
  return (
    <Dialog open={props.open} title="Create a key" onClose={props.onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const k = await post<KeyCreated>("/v1/keys", {
              name: d.name,
              recall: d.recall,
              tools: d.tools,
              mcp: d.mcp,
              admin: d.admin,
              recall_notes: d.recall_notes,
              recall_tokens: d.recall_tokens,
              spend_cap_micros: capMicros(d.cap),
            });
            props.onCreated(k);
          } catch (err) {
            setError(describe(err));
          }
        }}
      >
        <label class="field">
          <span>Name</span>
          <input value={d.name} onInput={(e) => set({ name: (e.target as HTMLInputElement).value })} required maxLength={100} autoFocus placeholder="ci-bot" />
        </label>
        <fieldset class="toggles">
          <legend>What the key gets</legend>
          <label class="checkbox">
            <input type="checkbox" checked={d.recall} onChange={(e) => set({ recall: (e.target as HTMLInputElement).checked })} /> Recall: notes
            recalled ahead of the last message
          </label>
          <label class="checkbox">
            <input type="checkbox" checked={d.tools} onChange={(e) => set({ tools: (e.target as HTMLInputElement).checked })} /> Memory tools in
            the gateway
          </label>
          <label class="checkbox">
            <input type="checkbox" checked={d.mcp} onChange={(e) => set({ mcp: (e.target as HTMLInputElement).checked })} /> MCP at /mcp
          </label>
          <label class="checkbox">
            <input type="checkbox" checked={d.admin} onChange={(e) => set({ admin: (e.target as HTMLInputElement).checked })} /> Admin: may manage
            keys and limits
          </label>
        </fieldset>
        <RecallFields notes={d.recall_notes} tokens={d.recall_tokens} cap={d.cap} onChange={set} />
        {error && (
          <p class="error-text" role="alert">
            {error}
          </p>
        )}
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

function RecallFields(props: { notes: number; tokens: number; cap: string; onChange: (d: Partial<Draft>) => void }) {
  return (
    <div class="field-row">
      <label class="field">
        <span>Recall notes (1–20)</span>
        <input type="number" min={1} max={20} value={props.notes} onInput={(e) => props.onChange({ recall_notes: Number((e.target as HTMLInputElement).value) })} />
      </label>
      <label class="field">
        <span>Recall tokens (100–32,000)</span>
        <input type="number" min={100} max={32000} step={100} value={props.tokens} onInput={(e) => props.onChange({ recall_tokens: Number((e.target as HTMLInputElement).value) })} />
      </label>
      <label class="field">
        <span>Spend cap, USD (empty: none)</span>
        <input type="number" min={0} step="0.01" value={props.cap} onInput={(e) => props.onChange({ cap: (e.target as HTMLInputElement).value })} />
      </label>
    </div>
  );
}

function KeySettings(props: { keyRow: Key; onClose: () => void; onSaved: (k: Key) => void }) {
  const k = props.keyRow;
  const [notes, setNotes] = useState(k.recall_notes);
  const [tokens, setTokens] = useState(k.recall_tokens);
  const [cap, setCap] = useState(k.spend_cap_micros === null ? "" : String(k.spend_cap_micros / 1_000_000));
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog open title={`Settings of ${k.name}`} onClose={props.onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            props.onSaved(await patch<Key>(`/v1/keys/${k.id}`, { recall_notes: notes, recall_tokens: tokens, spend_cap_micros: capMicros(cap) }));
            toast(`Saved the settings of ${k.name}.`, "success");
          } catch (err) {
            setError(describe(err));
          }
        }}
      >
        <RecallFields
          notes={notes}
          tokens={tokens}
          cap={cap}
          onChange={(d) => {
            if (d.recall_notes !== undefined) setNotes(d.recall_notes);
            if (d.recall_tokens !== undefined) setTokens(d.recall_tokens);
            if (d.cap !== undefined) setCap(d.cap);
          }}
        />
        {error && (
          <p class="error-text" role="alert">
            {error}
          </p>
        )}
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
