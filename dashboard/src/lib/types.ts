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
  /** Whether the note is searchable by meaning yet (servers with vector search). */
  vector_status?: "indexed" | "pending" | "off";
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
  /** Semantic and hybrid hits: the passage that matched best (offset in the markdown). */
  chunk?: { heading: string; offset: number; length: number } | null;
}

export interface SearchOut {
  query: string;
  /** The mode that ran, and why it is not the one asked for. */
  mode?: "keyword" | "semantic" | "hybrid";
  fallback?: string | null;
  results: SearchHit[];
}

export interface ImportResult {
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  skipped_files: string[];
  /** Attachments and .obsidian/ configuration files, counted apart from notes. */
  files_created?: number;
  files_updated?: number;
  files_unchanged?: number;
  config_files?: number;
}

export type JobStatus = "awaiting_upload" | "queued" | "running" | "succeeded" | "failed" | "expired";
export type JobPhase = "uploading" | "parsing" | "committing" | "indexing" | "exporting";

export interface JobLink {
  method: "PUT" | "GET";
  url: string;
  headers: Record<string, string>;
  max_bytes?: number | null;
  expires_at: string;
}

/** An import or export job (POST /v1/imports, POST /v1/exports, GET /v1/jobs). */
export interface Job {
  id: string;
  kind: "import" | "export";
  status: JobStatus;
  progress: { phase: JobPhase | null; done: number; total: number };
  /** An import's: what POST /v1/import answers; an export's: {notes, windows_unsafe}. */
  report: (Partial<ImportResult> & { notes?: number; windows_unsafe?: number }) | null;
  error: { type: string; code: string; message: string } | null;
  filename: string | null;
  bytes: number | null;
  created_at: string;
  updated_at: string;
  upload?: JobLink | null;
  download?: { url: string; bytes: number; expires_at: string; filename: string } | null;
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
  /** memvault's own estimate of what it added, by source (recall, profile). */
  injected_tokens_est?: Record<string, number>;
  /** Memory profiles' fact-search embeddings: calls and cost_micros. */
  memory_search_embed?: { calls: number; cost_micros: number };
  /** Usage records of embedding calls (api_format "embeddings"): calls and cost_micros. */
  embeddings?: { calls: number; cost_micros: number };
  /** Requests answered from the response cache, and the upstream tokens they saved. */
  cache?: { hits: number; saved_tokens: number };
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

export type ItemType = "guardrail" | "preference" | "fact";

export interface Memory {
  id: string;
  slug: string;
  name: string;
  description: string;
  owner_member_id: string;
  owner: string | null;
  /** The caller's own keys can attach it: it is the caller's (x-mem-id resolves only those). */
  attachable: boolean;
  active: boolean;
  retention_days: number | null;
  item_count: number;
  /** Current items by type (expired ones not counted), every type present. */
  item_counts: Record<string, number>;
  created_at: number;
  updated_at: number;
}

export interface MemoryItem {
  id: string;
  item_type: ItemType;
  text: string;
  key: string | null;
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  embedded: boolean;
}

export interface MemoryDetail extends Memory {
  items: MemoryItem[];
}

export interface MemoryList {
  memories: Memory[];
  next_cursor: string | null;
}

/** GET /v1/notes/{path}/links: a note's links as written, each resolved by the server. */
export interface OutgoingLink extends Link {
  kind: "wikilink" | "markdown" | "property";
  /** The note (or attachment) it reaches now; null when it dangles. */
  path: string | null;
}
