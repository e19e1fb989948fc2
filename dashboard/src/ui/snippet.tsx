// A search snippet: the server sends escaped note text with <mark> around the hits. It is
// turned into text nodes and <mark> elements here, never parsed as HTML, so nothing in a
// note can become markup on the search page.
const ENTITY: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", "#x27": "'" };

function unescape(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_m, name: string) => ENTITY[name] ?? "");
}

export function Snippet(props: { html: string }) {
  const parts = props.html.split(/(<mark>|<\/mark>)/);
  const out: preact.ComponentChildren[] = [];
  let marked = false;
  parts.forEach((part, i) => {
    if (part === "<mark>") marked = true;
    else if (part === "</mark>") marked = false;
    else if (part) out.push(marked ? <mark key={i}>{unescape(part)}</mark> : unescape(part));
  });
  return <span class="snippet">{out}</span>;
}
