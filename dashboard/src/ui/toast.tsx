// Short notices in one polite live region (screen readers hear them), each with an
// optional action (Undo).
import { Store, useStore } from "../lib/store";

export interface Toast {
  id: number;
  text: string;
  kind: "info" | "error" | "success";
  action?: { label: string; run: () => void };
}

const toasts = new Store<Toast[]>([]);
let next = 0;

export function toast(
  text: string,
  kind: Toast["kind"] = "info",
  action?: Toast["action"],
  ms = action ? 10000 : 5000,
): void {
  const item: Toast = { id: ++next, text, kind, action };
  toasts.update((list) => [...list.slice(-3), item]);
  window.setTimeout(() => dismiss(item.id), ms);
}

function dismiss(id: number): void {
  toasts.update((list) => list.filter((t) => t.id !== id));
}

export function Toasts() {
  const list = useStore(toasts);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((t) => (
        <div key={t.id} class={`toast ${t.kind}`}>
          <span>{t.text}</span>
          {t.action && (
            <button
              type="button"
              class="link-button"
              onClick={() => {
                dismiss(t.id);
                t.action?.run();
              }}
            >
              {t.action.label}
            </button>
          )}
          <button type="button" class="icon-button" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
