// The rendered note: properties (frontmatter) as a table, then the sanitised HTML.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { useStore } from "../lib/store";
import { vaultFiles } from "./files";
import { resolver, vault } from "./index";
import { knownLinks, serverLinks } from "./links";
import { renderMarkdown, splitFrontmatter } from "./render";

function value(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) return v.map(value).join(", ");
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

export function Preview(props: { source: string; text: string; onRendered?: () => void; topLine?: number; matchLine?: number }) {
  const index = useStore(vault);
  const attachments = useStore(vaultFiles);
  const told = useStore(serverLinks);
  const [shown, setShown] = useState(props.text);
  const ref = useRef<HTMLDivElement>(null);
  // Rendering follows typing at a pace that suits the note's size: at once for a short
  // note, a little behind for a long one, so typing never waits on the preview.
  useEffect(() => {
    if (props.text === shown) return undefined;
    const delay = props.text.length < 20_000 ? 0 : props.text.length < 200_000 ? 120 : 400;
    const timer = window.setTimeout(() => setShown(props.text), delay);
    return () => window.clearTimeout(timer);
  }, [props.text, shown]);
  const front = useMemo(() => splitFrontmatter(shown), [shown]);
  // The note's links as the server resolved them win; the index resolves the rest.
  const html = useMemo(
    () => renderMarkdown(front.body, { ...resolver(), source: props.source, known: knownLinks(props.source) }),
    [front.body, index.revision, attachments.revision, told, props.source],
  );
  // Told as soon as the HTML is in the DOM (a layout effect), so a listener can wait
  // for exactly the frame that paints it.
  useLayoutEffect(() => {
    props.onRendered?.();
  }, [html]);
  useEffect(() => {
    const container = ref.current;
    if (!container || props.topLine === undefined) return;
    const line = props.topLine - front.lines;
    let target: HTMLElement | null = null;
    for (const el of container.querySelectorAll<HTMLElement>("[data-line]")) {
      if (Number(el.dataset.line) <= line) target = el;
      else break;
    }
    const scroller = container.closest<HTMLElement>(".preview-pane");
    if (scroller) scroller.scrollTop = target ? target.offsetTop - 8 : 0;
  }, [props.topLine]);
  // A search hit's passage: its heading (the last one at or above the line) is marked and
  // scrolled to.
  useEffect(() => {
    const container = ref.current;
    if (!container) return;
    for (const el of container.querySelectorAll(".matched-heading")) el.classList.remove("matched-heading");
    if (props.matchLine === undefined) return;
    const line = props.matchLine - front.lines;
    let target: HTMLElement | null = null;
    for (const el of container.querySelectorAll<HTMLElement>("h1[data-line], h2[data-line], h3[data-line], h4[data-line], h5[data-line], h6[data-line]")) {
      if (Number(el.dataset.line) <= line) target = el;
      else break;
    }
    if (!target) return;
    target.classList.add("matched-heading");
    const scroller = container.closest<HTMLElement>(".preview-pane");
    if (scroller) scroller.scrollTop = target.offsetTop - 8;
  }, [props.matchLine, html]);
  return (
    <div class="preview" ref={ref}>
      {front.data && (
        <table class="properties">
          <caption>Properties</caption>
          <tbody>
            {Object.entries(front.data).map(([k, v]) => (
              <tr key={k}>
                <th scope="row">{k}</th>
                <td>{value(v)}</td>
              </tr>
            ))}
            {front.error && (
              <tr>
                <th scope="row">error</th>
                <td class="error-text">The frontmatter is not valid YAML: {front.error}</td>
              </tr>
            )}
          </tbody>
        </table>
      )}
      {/* Sanitised by renderMarkdown (DOMPurify): no script, handler or javascript: URL. */}
      <div class="markdown-body" dangerouslySetInnerHTML={{ __html: html }} />
    </div>
  );
}
