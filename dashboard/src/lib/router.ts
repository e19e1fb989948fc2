// A small history router. Routes are paths under the dashboard's root ("vault/a/b.md",
// "search?q=x"); the server answers the same page for every one of them.
import { appRoot } from "./env";
import { Store } from "./store";

export interface Route {
  /** The path under the app root, without a leading slash, decoded: "vault/a b.md". */
  path: string;
  query: URLSearchParams;
}

function current(): Route {
  const { pathname, search } = location;
  let rest = pathname.startsWith(appRoot) ? pathname.slice(appRoot.length) : "";
  try {
    rest = decodeURIComponent(rest);
  } catch {
    // a malformed escape: keep it as it came
  }
  return { path: rest.replace(/^\/+/, ""), query: new URLSearchParams(search) };
}

export const route = new Store<Route>(current());

/** Asked before every navigation; a listener that answers false keeps the page. */
const guards = new Set<() => boolean>();
export function guardNavigation(guard: () => boolean): () => void {
  guards.add(guard);
  return () => guards.delete(guard);
}

export function href(to: string): string {
  const [path, query] = to.split("?", 2) as [string, string | undefined];
  const encoded = path.split("/").map(encodeURIComponent).join("/");
  return appRoot + encoded + (query ? `?${query}` : "");
}

export function navigate(to: string, options: { replace?: boolean; sameOpening?: boolean } = {}): void {
  for (const guard of guards) if (!guard()) return;
  const target = href(to);
  if (target === location.pathname + location.search) return;
  if (!options.sameOpening) {
    // The bench measures a note's opening from here (a redirect of the same opening,
    // such as a link resolved once the index arrived, keeps the click's mark).
    performance.clearMarks("mv:navigate");
    performance.mark("mv:navigate");
  }
  if (options.replace) history.replaceState(null, "", target);
  else history.pushState(null, "", target);
  route.set(current());
}

/** Change the query of the current page without a history entry (search as you type). */
export function setQuery(params: Record<string, string>): void {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) query.set(k, v);
  const text = query.toString();
  history.replaceState(null, "", location.pathname + (text ? `?${text}` : ""));
  route.set(current());
}

window.addEventListener("popstate", () => route.set(current()));

/** Follow clicks on same-app links without a page load (modifier keys keep the browser's
 * own behaviour: a new tab). */
document.addEventListener("click", (event) => {
  if (event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = (event.target as Element | null)?.closest?.("a");
  if (!anchor || anchor.target || anchor.hasAttribute("download")) return;
  const target = new URL(anchor.href, location.href);
  if (target.origin !== location.origin || !target.pathname.startsWith(appRoot)) return;
  event.preventDefault();
  let path = target.pathname.slice(appRoot.length);
  try {
    path = decodeURIComponent(path);
  } catch {
    // keep as is
  }
  navigate(path + target.search);
});
