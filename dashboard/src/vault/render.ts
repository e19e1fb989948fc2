// Markdown to safe HTML for the preview: markdown-it (CommonMark, tables, strikethrough)
// with the vault's own syntax — [[wikilinks]] (![[embeds]]) as links resolved the way
// the server resolves them, #tags as links to search, frontmatter split off as
// properties — and everything DOMPurify-sanitised: note text is untrusted, so a
// <script>, an onerror= or a javascript: link never survives (and the page's CSP would
// refuse to run one anyway).
import DOMPurify from "dompurify";
import { JSON_SCHEMA, load } from "js-yaml";
import MarkdownIt from "markdown-it";
import type { StateInline } from "markdown-it";
import { href } from "../lib/router";
import { fileName, fileOf, filesPrefix, fileType, fileUrl } from "./files";
import { mayNameFile, resolveLink, type Resolver } from "./keys";

export interface Frontmatter {
  /** The properties, or null when there is no frontmatter block. */
  data: Record<string, unknown> | null;
  error: string | null;
  body: string;
  /** Lines the block takes, so preview lines can be matched to editor lines. */
  lines: number;
}

const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

export function splitFrontmatter(markdown: string): Frontmatter {
  const match = FRONTMATTER.exec(markdown);
  if (!match) return { data: null, error: null, body: markdown, lines: 0 };
  const block = match[0];
  const lines = block.split("\n").length - (block.endsWith("\n") ? 1 : 0);
  try {
    const parsed = load(match[1] ?? "", { schema: JSON_SCHEMA });
    const data =
      parsed && typeof parsed === "object" && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : {};
    return { data, error: null, body: markdown.slice(block.length), lines };
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] ?? "" : String(error);
    return { data: {}, error: message, body: markdown.slice(block.length), lines };
  }
}

let currentResolver: Resolver = { byLinkKey: new Map(), byNameKey: new Map() };

function wikilinkRule(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  let pos = state.pos;
  const embed = src.charCodeAt(pos) === 0x21; /* ! */
  if (embed) pos++;
  if (src.charCodeAt(pos) !== 0x5b || src.charCodeAt(pos + 1) !== 0x5b) return false;
  const close = src.indexOf("]]", pos + 2);
  if (close < 0) return false;
  const inner = src.slice(pos + 2, close);
  if (/[[\]\n]/.test(inner)) return false;
  const pipe = inner.indexOf("|");
  const targetPart = pipe < 0 ? inner : inner.slice(0, pipe > 0 && inner[pipe - 1] === "\\" ? pipe - 1 : pipe);
  const alias = pipe < 0 ? null : inner.slice(pipe + 1);
  const hash = targetPart.indexOf("#");
  const target = hash < 0 ? targetPart : targetPart.slice(0, hash);
  const heading = hash < 0 ? null : targetPart.slice(hash + 1);
  if (!target.trim()) return false;
  if (!silent) {
    const token = state.push("wikilink", "a", 0);
    token.meta = { target, heading, alias, embed };
  }
  state.pos = close + 2;
  return true;
}

const TAG_BODY = /^[\p{L}\p{N}_/-]+/u;

function tagRule(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  const pos = state.pos;
  if (src.charCodeAt(pos) !== 0x23 /* # */) return false;
  const before = pos === 0 ? " " : src[pos - 1] ?? " ";
  if (!/\s|[(,]/.test(before)) return false;
  const match = TAG_BODY.exec(src.slice(pos + 1));
  if (!match) return false;
  const tag = match[0].replace(/\/+$/, "");
  if (!tag || /^\d+$/.test(tag)) return false;
  if (!silent) {
    const token = state.push("vault_tag", "a", 0);
    token.content = tag;
  }
  state.pos = pos + 1 + tag.length;
  return true;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const isFilePath = (path: string): boolean => !/\.md$/i.test(path);

/** Obsidian's size suffix of an embed's alias or an image's alt text: "300" or
 * "300x200" after the last pipe ("![[a.png|300]]", "![caption|300](a.png)"). */
function sized(text: string | null): { alt: string | null; width?: number; height?: number } {
  if (text === null) return { alt: null };
  const match = /^(?:(.*)\|)?(\d{1,5})(?:x(\d{1,5}))?$/.exec(text);
  if (!match) return { alt: text };
  return { alt: match[1] ?? null, width: Number(match[2]), height: match[3] ? Number(match[3]) : undefined };
}

/** An attachment embedded in a note: images (SVG too, never inline: an <img> cannot run
 * its script) drawn, audio and video in the browser's player, anything else (a PDF: the
 * server's sandbox CSP keeps it out of a frame) a link to its page. */
function embedFile(path: string, alt: string | null, width?: number, height?: number): string {
  const name = fileName(path);
  const src = escapeHtml(fileUrl(path, fileOf(path)?.sha256));
  const page = escapeHtml(href(`vault/${path}`));
  const size = `${width ? ` width="${width}"` : ""}${height ? ` height="${height}"` : ""}`;
  const type = fileType(path);
  if (type === "image" || type === "svg") {
    return `<img class="embed-image" src="${src}" alt="${escapeHtml(alt ?? name)}" title="${escapeHtml(path)}" loading="lazy"${size}>`;
  }
  if (type === "audio") return `<audio class="embed-media" controls preload="metadata" src="${src}" title="${escapeHtml(path)}"></audio>`;
  if (type === "video") return `<video class="embed-media" controls preload="metadata" src="${src}" title="${escapeHtml(path)}"${size}></video>`;
  return `<a class="wikilink embed file-embed" href="${page}" title="${escapeHtml(path)}">${escapeHtml(alt ?? name)}</a>`;
}

/** An embed whose file is not in the vault: shown dangling, a link to the page that
 * offers to upload it. */
function danglingEmbed(target: string, label: string): string {
  const path = target.trim().replace(/^(?:\.{0,2}\/)+/, "");
  return `<a class="wikilink dangling embed" href="${escapeHtml(href(`vault/${path}`))}" title="${escapeHtml(`No file at ${path} yet`)}" data-target="${escapeHtml(target)}">${escapeHtml(label)}</a>`;
}

/** A markdown link's or image's destination as the server reads it (percent-decoded), or
 * null for a URL with a scheme, a protocol-relative one or a same-note anchor. */
function vaultTarget(dest: string): string | null {
  if (!dest || dest.startsWith("#") || dest.startsWith("//") || /^[a-z][a-z0-9+.-]*:/i.test(dest)) return null;
  const path = dest.split("#")[0] ?? "";
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

function createRenderer() {
  const md = new MarkdownIt({ html: true, linkify: false, typographer: false, breaks: false });
  md.inline.ruler.before("link", "wikilink", wikilinkRule);
  md.inline.ruler.push("vault_tag", tagRule);
  md.renderer.rules.wikilink = (tokens, idx) => {
    const { target, heading, alias, embed } = tokens[idx]!.meta as {
      target: string;
      heading: string | null;
      alias: string | null;
      embed: boolean;
    };
    const resolved = resolveLink(target, currentResolver);
    if (embed && (resolved ? isFilePath(resolved) : mayNameFile(target.trim()) && !/\.md$/i.test(target.trim()))) {
      const { alt, width, height } = sized(alias);
      return resolved ? embedFile(resolved, alt, width, height) : danglingEmbed(target, alt ?? target);
    }
    const path = resolved ?? `${target.trim().replace(/\.md$/i, "")}.md`;
    const label = alias ?? (heading ? `${target} › ${heading}` : target);
    const cls = `wikilink${resolved ? "" : " dangling"}${embed ? " embed" : ""}`;
    const title = resolved ? resolved : `No note at ${path} yet`;
    // data-target: the link as written, so a click made before the server's resolution
    // of this note's links arrived can still follow it (vault/open.ts).
    return `<a class="${cls}" href="${escapeHtml(href(`vault/${path}`))}" title="${escapeHtml(title)}" data-target="${escapeHtml(target)}">${escapeHtml(label)}</a>`;
  };
  // ![alt](img/a.png): a vault file, resolved as the server resolves it (the note's
  // folder first); a URL stays an image the sanitiser turns into a link.
  const image = md.renderer.rules.image!;
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx]!;
    const target = vaultTarget(String(token.attrGet("src") ?? ""));
    if (target === null) return image(tokens, idx, options, env, self);
    const { alt, width, height } = sized(self.renderInlineAsText(token.children ?? [], options, env));
    const resolved = resolveLink(target, currentResolver);
    if (resolved && isFilePath(resolved)) return embedFile(resolved, alt || null, width, height);
    if (resolved) return `<a class="wikilink embed" href="${escapeHtml(href(`vault/${resolved}`))}" title="${escapeHtml(resolved)}">${escapeHtml(alt || target)}</a>`;
    return danglingEmbed(target, alt || target);
  };
  // [text](doc.pdf), [text](Other%20note.md): the vault page of the file or note meant.
  md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
    const token = tokens[idx]!;
    const target = vaultTarget(String(token.attrGet("href") ?? ""));
    const resolved = target ? resolveLink(target, currentResolver) : null;
    if (resolved) token.attrSet("href", href(`vault/${resolved}`));
    return self.renderToken(tokens, idx, options);
  };
  md.renderer.rules.vault_tag = (tokens, idx) => {
    const tag = tokens[idx]!.content;
    return `<a class="tag" href="${escapeHtml(href(`search?tag=${encodeURIComponent(tag)}`))}">#${escapeHtml(tag)}</a>`;
  };
  // Each top-level block says which source line it starts on, so the preview can follow
  // the editor's scroll.
  const original = md.renderer.renderToken.bind(md.renderer);
  md.renderer.renderToken = (tokens, idx, options) => {
    const token = tokens[idx]!;
    if (token.map && token.level === 0 && token.nesting !== -1) token.attrSet("data-line", String(token.map[0]));
    return original(tokens, idx, options);
  };
  return md;
}

const renderer = createRenderer();

/** Whether a URL is one of the vault's files on the API's own origin. */
function vaultFile(src: string): boolean {
  try {
    const u = new URL(src, location.href);
    return u.origin === location.origin && u.pathname.startsWith(filesPrefix());
  } catch {
    return false;
  }
}

let hooked = false;
function hookSanitizer(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName === "A") {
      const a = node as HTMLAnchorElement;
      const target = a.getAttribute("href");
      if (target && !target.startsWith("#")) {
        const u = new URL(target, location.href);
        if (u.origin !== location.origin) {
          a.setAttribute("target", "_blank");
          a.setAttribute("rel", "noopener noreferrer nofollow");
        }
      }
    }
    if (node.nodeName === "AUDIO" || node.nodeName === "VIDEO" || node.nodeName === "SOURCE" || node.nodeName === "TRACK") {
      // Players load the vault's own files only (the page's CSP allows nothing else).
      const src = node.getAttribute("src");
      if (src !== null && !vaultFile(src)) node.removeAttribute("src");
    }
    if (node.nodeName === "IMG") {
      // Only inline (data:) images and the vault's own files load: a remote one would let
      // a note make the viewer's browser call out. It becomes a link the reader can
      // choose to follow.
      const img = node as HTMLImageElement;
      const src = img.getAttribute("src") ?? "";
      if (!src.startsWith("data:image/") && !vaultFile(src)) {
        const link = document.createElement("a");
        link.textContent = `🖼 ${img.getAttribute("alt") || src || "image"}`;
        if (/^https?:/i.test(src)) {
          link.setAttribute("href", src);
          link.setAttribute("target", "_blank");
          link.setAttribute("rel", "noopener noreferrer nofollow");
        }
        link.className = "remote-image";
        img.replaceWith(link);
      }
    }
  });
}

const PURIFY = {
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "option", "iframe", "object", "embed", "link", "meta", "base"],
  FORBID_ATTR: ["style", "srcset", "formaction", "id", "name", "poster", "autoplay"],
  ALLOW_DATA_ATTR: false,
  ADD_ATTR: ["data-line", "data-target", "target", "loading"],
};

/** The note body (frontmatter already split off) as sanitised HTML. */
export function renderMarkdown(body: string, resolve: Resolver): string {
  hookSanitizer();
  currentResolver = resolve;
  const html = renderer.render(body);
  return DOMPurify.sanitize(html, PURIFY) as unknown as string;
}
