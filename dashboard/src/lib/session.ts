// Who is signed in. POST /v1/sessions (email and password, or an API key) sets the
// HttpOnly session cookie and answers the CSRF token; GET /v1/me says who the session is
// (member, role, organisation, how they signed in); DELETE /v1/sessions/current ends it.
import { ApiError, call, csrf, get } from "./api";
import { Store } from "./store";

export type Role = "owner" | "admin" | "member";

export interface Me {
  name: string;
  email: string | null;
  role: Role;
  organisation: string;
  authMethod: string;
  memberId: string | null;
  raw: Record<string, unknown>;
}

type Loose = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);
const obj = (v: unknown): Loose => (v && typeof v === "object" ? (v as Loose) : {});

/** /v1/me as the dashboard needs it. Read loosely: a key-only server answers the key
 * itself (its ``admin`` flag standing for the role). */
export function readMe(raw: Loose): Me {
  const member = obj(raw.member);
  const org = obj(raw.organisation ?? raw.organization ?? raw.org);
  const key = obj(raw.key);
  const roleText = str(raw.role) ?? str(member.role);
  const role: Role =
    roleText === "owner" || roleText === "admin" || roleText === "member"
      ? roleText
      : raw.admin === true || key.admin === true
        ? "owner"
        : "member";
  return {
    name: str(member.name) ?? str(member.email) ?? str(raw.name) ?? "signed in",
    email: str(member.email) ?? str(raw.email),
    role,
    organisation: str(org.name) ?? str(raw.organisation_name) ?? "",
    authMethod: str(raw.auth_method) ?? str(raw.auth) ?? (raw.prefix ? "api_key" : "session"),
    memberId: str(member.id) ?? str(raw.member_id),
    raw,
  };
}

/** undefined: not known yet; null: signed out. */
export const me = new Store<Me | null | undefined>(undefined);

export function canManageMembers(who: Me | null | undefined): boolean {
  return who?.role === "owner" || who?.role === "admin";
}

export async function loadMe(): Promise<Me | null> {
  try {
    const raw = await get<Loose>("/v1/me", { quiet401: true });
    const token = str(raw.csrf_token);
    if (token) csrf.set(token);
    const who = readMe(raw);
    me.set(who);
    return who;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      me.set(null);
      return null;
    }
    throw error;
  }
}

export type Credentials = { email: string; password: string } | { api_key: string };

export async function signIn(credentials: Credentials): Promise<Me | null> {
  const answer = await call<Loose>("POST", "/v1/sessions", { json: credentials, quiet401: true });
  const token = str(answer.data?.csrf_token);
  if (token) csrf.set(token);
  return loadMe();
}

export async function signOut(): Promise<void> {
  try {
    await call("DELETE", "/v1/sessions/current", { quiet401: true });
  } finally {
    csrf.set(null);
    me.set(null);
  }
}
