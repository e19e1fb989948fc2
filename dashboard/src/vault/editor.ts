// The markdown editor: CodeMirror 6, loaded only when a note is opened (its own chunk).
// Markdown highlighting, undo history, search (Mod-f), [[wikilink]] completion from the
// vault's note names, Mod-s to save, soft wrap; its theme follows the page's CSS
// variables, so light and dark need no second theme.
import { autocompletion, closeBrackets, completionKeymap, type Completion, type CompletionContext, type CompletionResult } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { defineLanguageFacet, HighlightStyle, Language, LanguageSupport, syntaxHighlighting } from "@codemirror/language";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";
import { EditorState, type Extension } from "@codemirror/state";
import { drawSelection, EditorView, highlightActiveLine, keymap, placeholder } from "@codemirror/view";
import { styleTags, tags as t } from "@lezer/highlight";
import { GFM, parser as markdownParser, type BlockContext, type Line, type MarkdownConfig } from "@lezer/markdown";
import { styleNonce } from "../lib/env";

export interface LinkTarget {
  /** What the link says: the file name, or the path when names clash. */
  label: string;
  path: string;
  /** An attachment (offered first after "![[", as Obsidian does). */
  file?: boolean;
}

export interface EditorOptions {
  doc: string;
  label: string;
  onChange: (text: string) => void;
  onSave: () => void;
  onTopLine?: (line: number) => void;
  linkTargets: () => LinkTarget[];
}

export interface Editor {
  view: EditorView;
  text(): string;
  replace(text: string): void;
  focus(): void;
  destroy(): void;
}

// Markdown (with GFM tables, task lists, strikethrough) straight from @lezer/markdown:
// @codemirror/lang-markdown would bring HTML, CSS and JavaScript highlighting for code
// blocks along, about 100 KB compressed that the vault page's budget cannot spare.
// YAML frontmatter at the very top is one block (shown dim), not a setext heading.
const Frontmatter: MarkdownConfig = {
  defineNodes: [{ name: "Frontmatter", block: true }],
  props: [styleTags({ Frontmatter: t.meta })],
  parseBlock: [
    {
      name: "Frontmatter",
      before: "HorizontalRule",
      parse(cx: BlockContext, line: Line): boolean {
        if (cx.lineStart !== 0 || !/^---\s*$/.test(line.text)) return false;
        const start = cx.lineStart;
        while (cx.nextLine()) {
          if (/^(---|\.\.\.)\s*$/.test(line.text)) {
            const end = cx.lineStart + line.text.length;
            cx.nextLine();
            cx.addElement(cx.elt("Frontmatter", start, end));
            return true;
          }
        }
        cx.addElement(cx.elt("Frontmatter", start, cx.lineStart));
        return true;
      },
    },
  ],
};

const markdownLanguage = new Language(
  defineLanguageFacet({ commentTokens: { block: { open: "<!--", close: "-->" } } }),
  markdownParser.configure([GFM, Frontmatter]),
  [],
  "markdown",
);
const markdown = () => new LanguageSupport(markdownLanguage);

const highlight = HighlightStyle.define([
  { tag: t.heading1, fontSize: "1.3em", fontWeight: "700" },
  { tag: t.heading2, fontSize: "1.15em", fontWeight: "700" },
  { tag: [t.heading3, t.heading4, t.heading5, t.heading6], fontWeight: "700" },
  { tag: t.strong, fontWeight: "700" },
  { tag: t.emphasis, fontStyle: "italic" },
  { tag: t.strikethrough, textDecoration: "line-through" },
  { tag: [t.link, t.url], color: "var(--accent)" },
  { tag: t.monospace, fontFamily: "var(--mono)", color: "var(--code-fg)" },
  { tag: [t.processingInstruction, t.meta, t.contentSeparator], color: "var(--muted)" },
  { tag: t.quote, color: "var(--muted)", fontStyle: "italic" },
]);

const theme = EditorView.theme({
  "&": { height: "100%", backgroundColor: "var(--bg)", color: "var(--fg)", fontSize: "15px" },
  ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "1.6" },
  ".cm-content": { padding: "16px 0", caretColor: "var(--fg)" },
  ".cm-line": { padding: "0 18px" },
  "&.cm-focused": { outline: "none" },
  ".cm-activeLine": { backgroundColor: "var(--active-line)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": { backgroundColor: "var(--selection) !important" },
  ".cm-cursor": { borderLeftColor: "var(--fg)" },
  ".cm-tooltip": { backgroundColor: "var(--panel)", color: "var(--fg)", border: "1px solid var(--border)" },
  ".cm-tooltip-autocomplete > ul > li[aria-selected]": { backgroundColor: "var(--accent)", color: "var(--accent-fg)" },
  ".cm-completionDetail": { color: "inherit", opacity: "0.75", marginLeft: "0.75em", fontStyle: "normal" },
  ".cm-panels": { backgroundColor: "var(--panel)", color: "var(--fg)" },
  ".cm-searchMatch": { backgroundColor: "var(--mark)" },
});

function wikilinkCompletions(targets: () => LinkTarget[]) {
  return (context: CompletionContext): CompletionResult | null => {
    const before = context.matchBefore(/\[\[[^[\]\n|#]*$/);
    if (!before) return null;
    const from = before.from + 2;
    const embed = before.from > 0 && context.state.sliceDoc(before.from - 1, before.from) === "!";
    const after = context.state.sliceDoc(context.pos, context.pos + 2);
    const close = after === "]]" ? "" : "]]";
    const options: Completion[] = targets().map((target) => ({
      label: target.label,
      detail: target.label === target.path.replace(/\.md$/, "") ? (target.file ? "file" : undefined) : target.path,
      type: target.file ? "file" : "text",
      boost: target.file === embed ? 1 : 0,
      apply: target.label + close,
    }));
    return { from, options, validFor: /^[^[\]\n|#]*$/ };
  };
}

export function createEditor(parent: HTMLElement, options: EditorOptions): Editor {
  let applying = false;
  const extensions: Extension[] = [
    history(),
    drawSelection(),
    highlightActiveLine(),
    highlightSelectionMatches(),
    closeBrackets(),
    EditorView.lineWrapping,
    markdown(),
    syntaxHighlighting(highlight),
    theme,
    placeholder("Write markdown… [[ links a note, # tags it"),
    autocompletion({ override: [wikilinkCompletions(options.linkTargets)], activateOnTyping: true, maxRenderedOptions: 50 }),
    keymap.of([
      { key: "Mod-s", preventDefault: true, run: () => (options.onSave(), true) },
      ...completionKeymap,
      ...searchKeymap,
      ...historyKeymap,
      ...defaultKeymap,
    ]),
    EditorView.contentAttributes.of({ "aria-label": options.label, spellcheck: "true" }),
    EditorView.updateListener.of((update) => {
      if (update.docChanged && !applying) options.onChange(update.state.doc.toString());
    }),
    EditorView.domEventHandlers({
      scroll: (_event, view) => {
        const top = view.lineBlockAtHeight(view.scrollDOM.scrollTop);
        options.onTopLine?.(view.state.doc.lineAt(top.from).number - 1);
      },
    }),
  ];
  if (styleNonce) extensions.push(EditorView.cspNonce.of(styleNonce));
  const view = new EditorView({ state: EditorState.create({ doc: options.doc, extensions }), parent });
  return {
    view,
    text: () => view.state.doc.toString(),
    replace(text: string) {
      applying = true;
      try {
        view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
      } finally {
        applying = false;
      }
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
