// The one way the dashboard calls memvault: the same REST API as every other client,
// signed in with the session cookie (HttpOnly, set by POST /v1/sessions), never a key in
// browser storage. Unsafe requests carry the session's CSRF token in x-csrf-token.
import { apiRoot } from "./env";
import { Store } from "./store";

export interface ErrorBody {
  type: string;
  code: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    message: string,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }

  static network(cause: unknown): ApiError {
    const text = cause instanceof Error ? cause.message : String(cause);
    return new ApiError(0, "network", "network_error", `memvault could not be reached (${text})`);
  }
}

const CSRF_KEY = "memvault.csrf";

/** The session's CSRF token. Not a credential on its own (the cookie is): kept in
 * sessionStorage only so a reload of the tab does not have to sign in again. */
export const csrf = new Store<string | null>(sessionStorage.getItem(CSRF_KEY));
csrf.subscribe((token) => {
  if (token) sessionStorage.setItem(CSRF_KEY, token);
  else sessionStorage.removeItem(CSRF_KEY);
});

/** Raised (once per expiry) when a call is answered 401: the app shows the sign-in
 * dialog over the page, so whatever is open (an unsaved edit) stays as it is. */
export const sessionExpired = new Store<number>(0);

export function url(path: string, query?: Record<string, string | number | undefined | null>): string {
  const u = new URL(path.replace(/^\//, ""), new URL(apiRoot, location.origin));
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined && v !== null && v !== "") u.searchParams.set(k, String(v));
  }
  return u.pathname + u.search;
}

/** A note path as it goes in a URL: each segment percent-encoded, the slashes kept. */
export function notePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

export interface CallOptions {
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  query?: Record<string, string | number | undefined | null>;
  signal?: AbortSignal;
  /** Do not treat 401 as an expired session (the sign-in call itself). */
  quiet401?: boolean;
}

export interface Answer<T> {
  status: number;
  data: T;
  headers: Headers;
}

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function requestHeaders(method: string, extra?: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = { Accept: "application/json", ...extra };
  const token = csrf.value;
  if (UNSAFE.has(method) && token) headers["x-csrf-token"] = token;
  return headers;
}

export async function errorOf(response: Response): Promise<ApiError> {
  let body: { error?: Partial<ErrorBody>; detail?: unknown } = {};
  try {
    body = await response.json();
  } catch {
    // not JSON: a proxy's page; keep the status
  }
  const e = body.error ?? {};
  const retry = Number(response.headers.get("retry-after"));
  return new ApiError(
    response.status,
    e.type ?? "http_error",
    e.code ?? `http_${response.status}`,
    e.message ?? `memvault answered ${response.status} ${response.statusText}`,
    Number.isFinite(retry) && retry > 0 ? retry : null,
  );
}

export async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<Answer<T>> {
  const headers = requestHeaders(method, options.headers);
  let body = options.body;
  if (options.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(options.json);
  }
  let response: Response;
  try {
    response = await fetch(url(path, options.query), {
      method,
      headers,
      body,
      credentials: "same-origin",
      signal: options.signal,
      cache: "no-store",
    });
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "AbortError") throw cause;
    throw ApiError.network(cause);
  }
  if (!response.ok && response.status !== 304) {
    const error = await errorOf(response);
    if (response.status === 401 && !options.quiet401) sessionExpired.update((n) => n + 1);
    throw error;
  }
  const text = response.status === 204 || response.status === 304 ? "" : await response.text();
  const data = (text ? JSON.parse(text) : null) as T;
  return { status: response.status, data, headers: response.headers };
}

export const get = async <T>(path: string, options?: CallOptions): Promise<T> =>
  (await call<T>("GET", path, options)).data;
export const post = async <T>(path: string, json?: unknown, options?: CallOptions): Promise<T> =>
  (await call<T>("POST", path, { ...options, json })).data;
export const patch = async <T>(path: string, json: unknown, options?: CallOptions): Promise<T> =>
  (await call<T>("PATCH", path, { ...options, json })).data;
export const del = async <T>(path: string, options?: CallOptions): Promise<T> =>
  (await call<T>("DELETE", path, options)).data;

/** A message for a person: the server's words, with what to do about a budget. */
export function describe(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 429 && error.retryAfter) return `${error.message} (retry in ${error.retryAfter} s)`;
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
