// Members and invitations (owners and admins): who is in the organisation with which
// role, and the invitations still open. Reads /v1/members and /v1/invitations.
import { useEffect, useState } from "preact/hooks";
import { del, describe, get, patch, post } from "../lib/api";
import { me, type Role } from "../lib/session";
import { useStore } from "../lib/store";
import { Confirm, Dialog } from "../ui/dialog";
import { CopyButton } from "../ui/copy";
import { when } from "../ui/format";
import { toast } from "../ui/toast";

interface Member {
  id: string;
  email: string | null;
  name: string;
  role: Role;
  created_at?: string;
  disabled_at?: string | null;
}

interface Invitation {
  id: string;
  email: string;
  role: Role;
  created_at?: string;
  expires_at?: string;
  token?: string;
  url?: string;
}

/** A list the server may answer bare or wrapped ({"members": [...]}). */
function listOf<T>(data: unknown, field: string): T[] {
  if (Array.isArray(data)) return data as T[];
  const wrapped = (data as Record<string, unknown> | null)?.[field];
  return Array.isArray(wrapped) ? (wrapped as T[]) : [];
}

const ROLES: Role[] = ["owner", "admin", "member"];

export function MembersPage() {
  const who = useStore(me);
  const [members, setMembers] = useState<Member[] | null>(null);
  const [invitations, setInvitations] = useState<Invitation[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [inviting, setInviting] = useState(false);
  const [invited, setInvited] = useState<Invitation | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);

  const load = async () => {
    try {
      setMembers(listOf<Member>(await get("/v1/members"), "members"));
      setInvitations(listOf<Invitation>(await get("/v1/invitations"), "invitations"));
    } catch (err) {
      setError(describe(err));
    }
  };
  useEffect(() => void load(), []);

  async function setRole(m: Member, role: Role) {
    try {
      await patch(`/v1/members/${m.id}`, { role });
      toast(`${m.name || m.email} is now ${role}.`, "success");
      void load();
    } catch (err) {
      toast(describe(err), "error");
    }
  }

  const owner = who?.role === "owner";
  return (
    <section aria-labelledby="members-h">
      <div class="page-head">
        <h1 id="members-h">Members</h1>
        <button type="button" class="primary" onClick={() => setInviting(true)}>
          Invite someone
        </button>
      </div>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      {members && (
        <div class="table-wrap">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {members.map((m) => (
                <tr key={m.id}>
                  <th scope="row">
                    {m.name} {m.id === who?.memberId && <span class="badge">you</span>}
                    {m.disabled_at && <span class="badge danger">disabled</span>}
                  </th>
                  <td>{m.email ?? <span class="muted">signs in with a key</span>}</td>
                  <td>
                    <select
                      aria-label={`Role of ${m.name}`}
                      value={m.role}
                      disabled={m.id === who?.memberId || (!owner && m.role === "owner")}
                      onChange={(e) => void setRole(m, (e.target as HTMLSelectElement).value as Role)}
                    >
                      {ROLES.filter((r) => owner || r !== "owner").map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>{when(m.created_at)}</td>
                  <td class="row-actions">
                    {m.id !== who?.memberId && (owner || m.role !== "owner") && (
                      <button type="button" class="small danger-outline" onClick={() => setRemoving(m)} aria-label={`Remove ${m.name}`}>
                        Remove
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Open invitations</h2>
      {invitations.length === 0 ? (
        <p class="muted">No invitation is waiting.</p>
      ) : (
        <div class="table-wrap">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {invitations.map((i) => (
                <tr key={i.id}>
                  <th scope="row">{i.email}</th>
                  <td>{i.role}</td>
                  <td>{when(i.expires_at)}</td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class="small danger-outline"
                      onClick={async () => {
                        try {
                          await del(`/v1/invitations/${i.id}`);
                          void load();
                        } catch (err) {
                          toast(describe(err), "error");
                        }
                      }}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <InviteDialog
        open={inviting}
        owner={owner}
        onClose={() => setInviting(false)}
        onInvited={(i) => {
          setInviting(false);
          setInvited(i);
          void load();
        }}
      />
      <Dialog open={invited !== null} title="Invitation created" onClose={() => setInvited(null)}>
        {invited && (
          <div>
            <p>
              Send this to <strong>{invited.email}</strong>; it is shown once.
            </p>
            {(invited.url || invited.token) && (
              <div class="secret-line">
                <code class="secret-value" id="invite-token">
                  {invited.url ?? invited.token}
                </code>
                <CopyButton text={invited.url ?? invited.token ?? ""} label="Copy the invitation" target={() => document.getElementById("invite-token")} />
              </div>
            )}
          </div>
        )}
      </Dialog>
      <Confirm
        open={removing !== null}
        title={`Remove ${removing?.name ?? ""}?`}
        message={<p>They can no longer sign in, and their keys stop working.</p>}
        confirm="Remove"
        danger
        onAnswer={async (yes) => {
          const m = removing;
          setRemoving(null);
          if (!yes || !m) return;
          try {
            await del(`/v1/members/${m.id}`);
            void load();
          } catch (err) {
            toast(describe(err), "error");
          }
        }}
      />
    </section>
  );
}

function InviteDialog(props: { open: boolean; owner: boolean; onClose: () => void; onInvited: (i: Invitation) => void }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog open={props.open} title="Invite someone" onClose={props.onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const out = await post<Record<string, unknown>>("/v1/invitations", { email, role });
            const inv = (out.invitation as Invitation | undefined) ?? (out as unknown as Invitation);
            props.onInvited({ ...inv, token: (out.token as string | undefined) ?? inv.token, url: (out.url as string | undefined) ?? inv.url });
          } catch (err) {
            setError(describe(err));
          }
        }}
      >
        <label class="field">
          <span>Email</span>
          <input type="email" value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} required autoFocus />
        </label>
        <label class="field">
          <span>Role</span>
          <select value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as Role)}>
            {ROLES.filter((r) => props.owner || r !== "owner").map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
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
            Invite
          </button>
        </div>
      </form>
    </Dialog>
  );
}
