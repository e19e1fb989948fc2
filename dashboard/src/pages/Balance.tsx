// The organisation's balance (owners): what is left, what requests in flight hold, and
// adding to it or setting it.
import { useEffect, useState } from "preact/hooks";
import { describe, get, post } from "../lib/api";
import type { Balance } from "../lib/types";
import { usd } from "../ui/format";
import { toast } from "../ui/toast";

export function BalancePage() {
  const [balance, setBalance] = useState<Balance | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [amount, setAmount] = useState("");
  useEffect(() => {
    get<Balance>("/v1/balance").then(setBalance, (err: unknown) => setError(describe(err)));
  }, []);
  async function change(body: Record<string, number | null>) {
    try {
      setBalance(await post<Balance>("/v1/balance", body));
      setAmount("");
      toast("Balance updated.", "success");
    } catch (err) {
      toast(describe(err), "error");
    }
  }
  const micros = Math.round(Number(amount) * 1_000_000);
  const valid = amount.trim() !== "" && Number.isFinite(micros);
  return (
    <section aria-labelledby="balance-h">
      <h1 id="balance-h">Balance</h1>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      {balance && (
        <>
          <dl class="stats">
            <div>
              <dt>Balance</dt>
              <dd>{balance.balance_micros === null ? "Unmetered" : usd(balance.balance_micros)}</dd>
            </div>
            <div>
              <dt>Held by requests in flight</dt>
              <dd>{usd(balance.held_micros)}</dd>
            </div>
          </dl>
          <p class="muted">
            {balance.balance_micros === null
              ? "Nothing is refused for money while the balance is unmetered."
              : "A gateway request is refused with 402 when the balance cannot cover it."}
          </p>
          <form class="card narrow" onSubmit={(e) => e.preventDefault()}>
            <label class="field">
              <span>Amount, USD</span>
              <input type="number" step="0.01" value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} />
            </label>
            <div class="actions">
              <button type="button" class="primary" disabled={!valid} onClick={() => void change({ add_micros: micros })}>
                Add to the balance
              </button>
              <button type="button" disabled={!valid} onClick={() => void change({ set_micros: micros })}>
                Set the balance
              </button>
              <button type="button" onClick={() => void change({ set_micros: null })}>
                Make unmetered
              </button>
            </div>
          </form>
        </>
      )}
    </section>
  );
}
