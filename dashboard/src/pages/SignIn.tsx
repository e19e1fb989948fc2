// Signing in: email and password, or an API key. Either way the server sets an HttpOnly
// session cookie; the key itself is sent once and never kept by the page.
import { useState } from "preact/hooks";
import { ApiError, describe } from "../lib/api";
import { signIn, type Credentials } from "../lib/session";

export function SignInForm(props: { onSignedIn: () => void; compact?: boolean }) {
  const [method, setMethod] = useState<"password" | "key">("password");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const credentials: Credentials = method === "password" ? { email, password } : { api_key: key.trim() };
    try {
      const who = await signIn(credentials);
      if (!who) throw new ApiError(401, "unauthenticated", "no_session", "signed in, but the session was not kept; are cookies allowed?");
      setPassword("");
      setKey("");
      props.onSignedIn();
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 404
          ? "This server has no sign-in for the dashboard yet (POST /v1/sessions is missing)."
          : describe(err),
      );
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="signin-form" onSubmit={submit}>
      <div class="segmented wide" role="radiogroup" aria-label="Sign in with">
        <button type="button" role="radio" aria-checked={method === "password"} onClick={() => setMethod("password")}>
          Email and password
        </button>
        <button type="button" role="radio" aria-checked={method === "key"} onClick={() => setMethod("key")}>
          API key
        </button>
      </div>
      {method === "password" ? (
        <>
          <label class="field">
            <span>Email</span>
            <input type="email" name="email" autoComplete="username" value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} required autoFocus />
          </label>
          <label class="field">
            <span>Password</span>
            <input type="password" name="password" autoComplete="current-password" value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} required />
          </label>
        </>
      ) : (
        <label class="field">
          <span>API key</span>
          <input type="password" name="api_key" autoComplete="off" spellcheck={false} placeholder="mvk_…" value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} required autoFocus />
          <small class="muted">Sent once to start a session; the page does not keep it.</small>
        </label>
      )}
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      <button type="submit" class="primary block" disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}

export function SignInPage(props: { onSignedIn: () => void }) {
  return (
    <main class="signin" id="main">
      <div class="signin-card">
        <div class="brand large" aria-hidden="true">
          <span class="logo">m</span> memvault
        </div>
        <h1>Sign in</h1>
        <p class="muted">Your vault of notes, its keys, members and usage.</p>
        <SignInForm onSignedIn={props.onSignedIn} />
      </div>
    </main>
  );
}
