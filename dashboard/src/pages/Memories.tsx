// Memory profiles (memIDs). The page is in the app's navigation and routes already; it
// lists and edits profiles once the server has the memories API (/v1/memories). Until
// then it says so rather than offering controls that would answer 404.
import { useEffect, useState } from "preact/hooks";
import { capabilities } from "../lib/capabilities";

export function MemoriesPage() {
  const [available, setAvailable] = useState<boolean | null>(null);
  useEffect(() => {
    void capabilities().then((caps) => setAvailable(caps.has("/v1/memories")));
  }, []);
  return (
    <section aria-labelledby="memories-h">
      <h1 id="memories-h">Memory profiles</h1>
      {available === null ? (
        <p class="muted">Checking what this server offers…</p>
      ) : available ? (
        <p class="notice">
          This server has the memories API, but this dashboard build predates it: update memvault to manage profiles here.
        </p>
      ) : (
        <div class="card">
          <p>
            This memvault server does not offer memory profiles yet. When it does, this page lists them (with search, the owner,
            item counts by type and an active switch), and each profile's page shows its guardrails, preferences and facts with
            their expiry, its retention setting, and the <code>x-mem-id</code> header snippet for the profiles you own.
          </p>
        </div>
      )}
    </section>
  );
}
