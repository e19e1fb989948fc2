// An API error shown in full: the server's message, with its type and code (and the HTTP
// status), so what was refused and why can be read off the page or quoted to an admin.
import { ApiError, describe } from "../lib/api";

export function ErrorBox(props: { error: unknown; prefix?: string }) {
  const e = props.error;
  if (e === null || e === undefined) return null;
  return (
    <div class="error-box" role="alert">
      <p class="error-text">
        {props.prefix ? `${props.prefix}: ` : ""}
        {describe(e)}
      </p>
      {e instanceof ApiError && e.status > 0 && (
        <p class="muted small-text">
          HTTP {e.status} · type <code>{e.type}</code> · code <code>{e.code}</code>
        </p>
      )}
    </div>
  );
}
