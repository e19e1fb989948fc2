// The shell: navigation by role, the page for the route, the sign-in dialog that covers
// the page when the session expires (so nothing open is lost), themes and shortcuts.
import { useEffect, useState } from "preact/hooks";
import { sessionExpired } from "./lib/api";
import { signedInAgain } from "./lib/reauth";
import { href, navigate, route } from "./lib/router";
import { canManageMembers, loadMe, me, signOut } from "./lib/session";
import { useStore } from "./lib/store";
import { BalancePage } from "./pages/Balance";
import { KeysPage } from "./pages/Keys";
import { MembersPage } from "./pages/Members";
import { MemoriesPage } from "./pages/Memories";
import { SearchPage } from "./pages/Search";
import { SignInForm, SignInPage } from "./pages/SignIn";
import { TransferPage } from "./pages/Transfer";
import { UsagePage } from "./pages/Usage";
import { VaultPage } from "./pages/Vault";
import { Dialog } from "./ui/dialog";
import { toast, Toasts } from "./ui/toast";
import { applyTheme, nextTheme, theme, type Theme } from "./ui/theme";

interface NavItem {
  to: string;
  label: string;
  show: boolean;
}

function Shortcuts(props: { open: boolean; onClose: () => void }) {
  const rows: [string, string][] = [
    ["/", "Search"],
    ["g then v", "Go to the vault"],
    ["Alt+N", "New note"],
    ["Ctrl+S / ⌘S", "Save the note"],
    ["Ctrl+F / ⌘F", "Find in the note (in the editor)"],
    ["[[", "Link a note (completion)"],
    ["↑ ↓ Enter", "Move through search results or the tree, open"],
    ["?", "This list"],
  ];
  return (
    <Dialog open={props.open} title="Keyboard shortcuts" onClose={props.onClose}>
      <table class="data compact">
        <tbody>
          {rows.map(([k, v]) => (
            <tr key={k}>
              <th scope="row">
                <kbd>{k}</kbd>
              </th>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Dialog>
  );
}

const typing = (target: EventTarget | null): boolean => {
  const el = target as HTMLElement | null;
  return Boolean(el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)));
};

export function App() {
  const who = useStore(me);
  const current = useStore(route);
  const expired = useStore(sessionExpired);
  const [expiredOpen, setExpiredOpen] = useState(false);
  const [help, setHelp] = useState(false);
  const mode = useStore(theme);

  useEffect(() => {
    loadMe().catch(() => me.set(null));
  }, []);
  useEffect(() => {
    if (expired > 0 && me.value) setExpiredOpen(true);
  }, [expired]);
  useEffect(() => applyTheme(mode), [mode]);

  useEffect(() => {
    let pendingG = false;
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || typing(event.target) || !me.value) return;
      if (event.key === "/" && !event.ctrlKey && !event.metaKey) {
        event.preventDefault();
        navigate("search");
      } else if (event.key === "?") {
        setHelp(true);
      } else if (event.altKey && event.key.toLowerCase() === "n") {
        event.preventDefault();
        navigate("vault");
        setTimeout(() => document.querySelector<HTMLButtonElement>(".side-head button")?.click(), 0);
      } else if (pendingG && event.key === "v") {
        navigate("vault");
      }
      pendingG = event.key === "g";
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  if (who === undefined) {
    return (
      <main class="loading" id="main" aria-busy="true">
        <p>Loading memvault…</p>
      </main>
    );
  }
  if (who === null) {
    return (
      <>
        <SignInPage onSignedIn={() => (current.path === "" || current.path.startsWith("signin") ? navigate("vault", { replace: true }) : undefined)} />
        <Toasts />
      </>
    );
  }

  const [section = "vault", ...rest] = current.path.split("/");
  const nav: NavItem[] = [
    { to: "vault", label: "Vault", show: true },
    { to: "search", label: "Search", show: true },
    { to: "import", label: "Import & export", show: true },
    { to: "keys", label: "Keys", show: who.role !== "member" },
    { to: "memories", label: "Memory profiles", show: true },
    { to: "members", label: "Members", show: canManageMembers(who) },
    { to: "usage", label: "Usage", show: true },
    { to: "balance", label: "Balance", show: who.role === "owner" },
  ];
  const allowed = new Set(nav.filter((n) => n.show).map((n) => n.to));
  const page = allowed.has(section) ? section : section === "" ? "vault" : "notfound";
  const notePath = page === "vault" && rest.length ? rest.join("/") : null;

  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={href("vault")}>
          <span class="logo" aria-hidden="true">
            m
          </span>
          <span>memvault</span>
        </a>
        <nav aria-label="Main">
          <ul>
            {nav
              .filter((n) => n.show)
              .map((n) => (
                <li key={n.to}>
                  <a href={href(n.to)} aria-current={page === n.to ? "page" : undefined}>
                    {n.label}
                  </a>
                </li>
              ))}
          </ul>
        </nav>
        <div class="account">
          <button type="button" class="icon-button" onClick={() => setHelp(true)} aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)">
            ?
          </button>
          <button type="button" class="icon-button" onClick={() => theme.set(nextTheme(mode))} aria-label={`Theme: ${mode}. Change theme`} title={`Theme: ${mode}`}>
            {mode === "dark" ? "☾" : mode === "light" ? "☀" : "◐"}
          </button>
          <span class="who" title={who.email ?? ""}>
            <span class="who-name">{who.name}</span>
            <span class="badge">{who.role}</span>
            {who.organisation && <span class="muted org">{who.organisation}</span>}
          </span>
          <button
            type="button"
            onClick={async () => {
              await signOut();
              toast("Signed out.");
              navigate("", { replace: true });
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main" class={`page page-${page}`}>
        {page === "vault" && <VaultPage notePath={notePath} />}
        {page === "search" && <SearchPage />}
        {page === "import" && <TransferPage />}
        {page === "keys" && <KeysPage />}
        {page === "memories" && <MemoriesPage memory={rest.length ? rest.join("/") : null} />}
        {page === "members" && <MembersPage />}
        {page === "usage" && <UsagePage />}
        {page === "balance" && <BalancePage />}
        {page === "notfound" && (
          <section class="padded">
            <h1>Not here</h1>
            <p>
              There is no page <code>{current.path}</code>
              {["members", "balance", "keys"].includes(section) ? " for your role" : ""}. <a href={href("vault")}>Back to the vault</a>.
            </p>
          </section>
        )}
      </main>
      <Dialog open={expiredOpen} title="Your session has ended" onClose={() => undefined} modalOnly>
        <p>Sign in again to carry on. Nothing on the page is lost: an unsaved edit is saved once you are back.</p>
        <SignInForm
          onSignedIn={() => {
            setExpiredOpen(false);
            signedInAgain();
          }}
        />
      </Dialog>
      <Shortcuts open={help} onClose={() => setHelp(false)} />
      <Toasts />
    </div>
  );
}

export type { Theme };
