// A modal dialog on the native <dialog> element: focus is trapped and restored, Escape
// closes it, and the page behind is inert, all by the browser.
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

let counter = 0;

export function Dialog(props: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
  /** The dialog cannot be dismissed (session expired: only signing in closes it). */
  modalOnly?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useRef(`dialog-${++counter}`);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (props.open && !el.open) el.showModal();
    if (!props.open && el.open) el.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      class={props.wide ? "dialog wide" : "dialog"}
      aria-labelledby={id.current}
      onCancel={(e) => {
        e.preventDefault();
        if (!props.modalOnly) props.onClose();
      }}
    >
      {props.open && (
        <div class="dialog-body">
          <header class="dialog-header">
            <h2 id={id.current}>{props.title}</h2>
            {!props.modalOnly && (
              <button type="button" class="icon-button" aria-label="Close" onClick={props.onClose}>
                ×
              </button>
            )}
          </header>
          {props.children}
        </div>
      )}
    </dialog>
  );
}

/** Ask a yes-or-no question in a dialog; resolves with the answer. */
export function Confirm(props: {
  open: boolean;
  title: string;
  message: ComponentChildren;
  confirm: string;
  danger?: boolean;
  onAnswer: (yes: boolean) => void;
}) {
  return (
    <Dialog open={props.open} title={props.title} onClose={() => props.onAnswer(false)}>
      <div class="dialog-message">{props.message}</div>
      <div class="dialog-actions">
        <button type="button" onClick={() => props.onAnswer(false)}>
          Cancel
        </button>
        <button
          type="button"
          class={props.danger ? "danger" : "primary"}
          onClick={() => props.onAnswer(true)}
        >
          {props.confirm}
        </button>
      </div>
    </Dialog>
  );
}
