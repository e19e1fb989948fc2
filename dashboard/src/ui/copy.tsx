// A copy button: the clipboard API where the page may use it (https, localhost), else
// the text is selected for Ctrl+C.
import { useState } from "preact/hooks";

export function CopyButton(props: { text: string; label: string; target?: () => HTMLElement | null }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="small"
      aria-label={props.label}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(props.text);
          setDone(true);
          window.setTimeout(() => setDone(false), 1500);
        } catch {
          const el = props.target?.();
          if (el) window.getSelection()?.selectAllChildren(el);
        }
      }}
    >
      {done ? "Copied" : "Copy"}
    </button>
  );
}

export function CodeBlock(props: { code: string; label: string }) {
  let pre: HTMLPreElement | null = null;
  return (
    <div class="code-block">
      <div class="code-head">
        <span>{props.label}</span>
        <CopyButton text={props.code} label={`Copy ${props.label}`} target={() => pre} />
      </div>
      <pre
        ref={(el) => {
          pre = el;
        }}
        tabIndex={0}
      >
        <code>{props.code}</code>
      </pre>
    </div>
  );
}
