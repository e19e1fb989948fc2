// Usage by day and key: one bar chart per measure (stacked by key), each with the table
// of its numbers under it, so the figures are readable without the picture.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { describe, get } from "../lib/api";
import type { Key, Usage, UsageRow } from "../lib/types";
import { count, usd } from "../ui/format";

interface Measure {
  id: string;
  label: string;
  value: (r: UsageRow) => number | undefined;
  format: (n: number) => string;
}

const MEASURES: Measure[] = [
  { id: "requests", label: "Requests", value: (r) => r.requests, format: count },
  { id: "tokens", label: "Tokens (input + output)", value: (r) => r.input_tokens + r.output_tokens, format: count },
  { id: "cost", label: "Cost", value: (r) => r.cost_micros, format: usd },
  { id: "injected", label: "Injected tokens", value: (r) => r.injected_tokens, format: count },
  { id: "injected-recall", label: "Injected tokens from vault recall (estimate)", value: (r) => r.injected_tokens_est?.recall, format: count },
  { id: "injected-profile", label: "Injected tokens from memory profiles (estimate)", value: (r) => r.injected_tokens_est?.profile, format: count },
  { id: "embedding", label: "Embedding calls", value: (r) => r.embeddings?.calls, format: count },
  { id: "embedding-cost", label: "Embedding cost", value: (r) => r.embeddings?.cost_micros, format: usd },
  { id: "fact-search", label: "Memory fact-search embeddings (memory_search_embed)", value: (r) => r.memory_search_embed?.calls, format: count },
  { id: "fact-search-cost", label: "Memory fact-search cost", value: (r) => r.memory_search_embed?.cost_micros, format: usd },
  { id: "cache", label: "Cache hits", value: (r) => r.cache?.hits, format: count },
];

const PALETTE = ["var(--series-1)", "var(--series-2)", "var(--series-3)", "var(--series-4)", "var(--series-5)", "var(--series-6)"];

function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

export function UsagePage() {
  const [days, setDays] = useState(30);
  const [usage, setUsage] = useState<Usage | null>(null);
  const [keys, setKeys] = useState<Map<string, string>>(new Map());
  const [error, setError] = useState<string | null>(null);

  // The period ends on the server's today (its clock decides which day a record is on):
  // the first call asks for the default 30 days and learns it.
  const today = useRef<string | null>(null);
  useEffect(() => {
    const load = async (): Promise<Usage> => {
      if (!today.current) {
        const first = await get<Usage>("/v1/usage");
        today.current = first.to;
        if (days === 30) return first;
      }
      const end = today.current;
      const from = new Date(Date.parse(`${end}T00:00:00Z`) - (days - 1) * 86400_000);
      return get<Usage>("/v1/usage", { query: { from: isoDay(from), to: end } });
    };
    load().then(setUsage, (err: unknown) => setError(describe(err)));
  }, [days]);
  useEffect(() => {
    get<Key[]>("/v1/keys").then((list) => setKeys(new Map(list.map((k) => [k.id, k.name]))), () => undefined);
  }, []);

  const dayList = useMemo(() => {
    if (!usage) return [];
    const out: string[] = [];
    for (let d = new Date(`${usage.from}T00:00:00Z`); isoDay(d) <= usage.to; d = new Date(d.getTime() + 86400_000)) out.push(isoDay(d));
    return out;
  }, [usage]);
  const keyIds = useMemo(() => [...new Set((usage?.days ?? []).map((r) => r.key_id ?? "—"))], [usage]);
  const present = MEASURES.filter((m) => usage && m.value(usage.totals) !== undefined);
  const absent = MEASURES.filter((m) => usage && m.value(usage.totals) === undefined);

  return (
    <section aria-labelledby="usage-h">
      <div class="page-head">
        <h1 id="usage-h">Usage</h1>
        <label class="field inline">
          <span>Period</span>
          <select value={days} onChange={(e) => setDays(Number((e.target as HTMLSelectElement).value))}>
            <option value={7}>Last 7 days</option>
            <option value={30}>Last 30 days</option>
            <option value={90}>Last 90 days</option>
          </select>
        </label>
      </div>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      {usage && (
        <>
          <p class="muted">
            {usage.from} to {usage.to} (UTC).{" "}
            {usage.tracked_since
              ? `Tracked since ${usage.tracked_since}: usage records (and their attribution) are kept from that day on; older ones are past the retention.`
              : "This server does not say how far back its usage data goes (tracked_since)."}
          </p>
          <dl class="stats">
            {present.map((m) => (
              <div key={m.id}>
                <dt>{m.label}</dt>
                <dd>{m.format(m.value(usage.totals) ?? 0)}</dd>
              </div>
            ))}
          </dl>
          {absent.length > 0 && <p class="muted small-text">Not reported by this server yet: {absent.map((m) => m.label.toLowerCase()).join(", ")}.</p>}
          <ul class="legend" aria-label="Keys">
            {keyIds.map((k, i) => (
              <li key={k}>
                <span class="swatch" style={{ background: PALETTE[i % PALETTE.length] }} aria-hidden="true" />
                {keys.get(k) ?? k}
              </li>
            ))}
          </ul>
          {present.map((m) => (
            <Chart key={m.id} measure={m} usage={usage} days={dayList} keyIds={keyIds} names={keys} />
          ))}
        </>
      )}
    </section>
  );
}

function Chart(props: { measure: Measure; usage: Usage; days: string[]; keyIds: string[]; names: Map<string, string> }) {
  const { measure, usage, days, keyIds } = props;
  const cell = useMemo(() => {
    const map = new Map<string, number>();
    for (const r of usage.days) map.set(`${r.day}|${r.key_id ?? "—"}`, measure.value(r) ?? 0);
    return map;
  }, [usage, measure]);
  const totals = days.map((d) => keyIds.reduce((sum, k) => sum + (cell.get(`${d}|${k}`) ?? 0), 0));
  const max = Math.max(1, ...totals);
  const width = 720;
  const height = 160;
  const bar = width / Math.max(1, days.length);
  const id = `chart-${measure.id}`;
  return (
    <section class="chart" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>{measure.label}</h2>
      <svg viewBox={`0 0 ${width} ${height + 18}`} role="img" aria-label={`${measure.label} per day, stacked by key; the table below has the numbers`}>
        {days.map((d, i) => {
          let y = height;
          return (
            <g key={d}>
              {keyIds.map((k, ki) => {
                const v = cell.get(`${d}|${k}`) ?? 0;
                const h = (v / max) * (height - 4);
                y -= h;
                return v > 0 ? <rect key={k} x={i * bar + 1} y={y} width={Math.max(1, bar - 2)} height={h} fill={PALETTE[ki % PALETTE.length]} /> : null;
              })}
              {(i % Math.ceil(days.length / 10) === 0 || i === days.length - 1) && (
                <text x={i * bar + bar / 2} y={height + 14} text-anchor="middle" class="axis">
                  {d.slice(5)}
                </text>
              )}
            </g>
          );
        })}
        <line x1={0} x2={width} y1={height} y2={height} class="axis-line" />
      </svg>
      <details>
        <summary>Table: {measure.label.toLowerCase()} by day and key</summary>
        <div class="table-wrap">
          <table class="data compact">
            <thead>
              <tr>
                <th scope="col">Day</th>
                {keyIds.map((k) => (
                  <th scope="col" key={k}>
                    {props.names.get(k) ?? k}
                  </th>
                ))}
                <th scope="col">Total</th>
              </tr>
            </thead>
            <tbody>
              {days.map((d, i) =>
                totals[i] ? (
                  <tr key={d}>
                    <th scope="row">{d}</th>
                    {keyIds.map((k) => (
                      <td key={k}>{measure.format(cell.get(`${d}|${k}`) ?? 0)}</td>
                    ))}
                    <td>{measure.format(totals[i] ?? 0)}</td>
                  </tr>
                ) : null,
              )}
            </tbody>
          </table>
        </div>
      </details>
    </section>
  );
}
