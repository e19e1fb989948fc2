// The REST API's shapes, as the dashboard reads them (see /openapi.json).

export interface NoteSummary {
  id: string;
  path: string;
  title: string;
  tags: string[];
  version: number;
  size: number;
  created_at: string;
  updated_at: string;
}

export interface Link {
  target: string;
  heading: string | null;
  alias: string | null;
  embed: boolean;
}

export interface Note extends NoteSummary {
  markdown: string;
  frontmatter: Record<string, unknown>;
  frontmatter_error: string | null;
  links: Link[];
}

export interface WriteOut {
  note: NoteSummary;
  changed: boolean;
  message: string;
}

export interface NoteList {
  notes: NoteSummary[];
  next_cursor: string | null;
}

export interface Version {
  version: number;
  path: string;
  size: number;
  sha256: string;
  created_at: string;
}

export interface VersionDetail extends Version {
  markdown: string;
}

export interface SearchHit {
  id: string;
  path: string;
  title: string;
  tags: string[];
  score: number;
  snippet: string;
  updated_at: string;
}

export interface SearchOut {
  query: string;
  results: SearchHit[];
}

export interface ImportResult {
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  skipped_files: string[];
}

export interface Key {
  id: string;
  name: string;
  prefix: string;
  recall: boolean;
  tools: boolean;
  mcp: boolean;
  admin: boolean;
  created_at: string;
  revoked_at: string | null;
  recall_notes: number;
  recall_tokens: number;
  spend_cap_micros: number | null;
  spent_micros: number;
}

export interface KeyCreated extends Key {
  secret: string;
}

export interface UsageRow {
  day: string | null;
  key_id: string | null;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  rounds: number;
  memory_calls: Record<string, number>;
  recalled_notes: number;
  injected_tokens: number;
  cost_micros: number;
  cost_usd: string;
  // Later issues add these; shown when the server sends them.
  embedding_calls?: number;
  cache_hits?: number;
  [extra: string]: unknown;
}

export interface Usage {
  from: string;
  to: string;
  days: UsageRow[];
  totals: UsageRow;
  tracked_since?: string | null;
}

export interface Balance {
  balance_micros: number | null;
  balance_usd: string | null;
  held_micros: number;
}
