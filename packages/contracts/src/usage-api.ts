/*
 * Usage records (issue 16): the public answers of `GET /v1/usage` and `GET /admin/v1/usage`, and
 * the request log billing serves to edge (and later the dashboard). Billing builds these bodies;
 * edge passes them through. Keys are snake_case like the rest of the public API; DZD amounts are
 * JSON numbers with up to 6 decimals.
 */

/** `day,model`: one group per UTC day and model (the dashboard's stacked chart). */
export const USAGE_GROUP_BY = ['day', 'model', 'key', 'day,model'] as const;
export type UsageGroupBy = (typeof USAGE_GROUP_BY)[number];

export const USAGE_OUTCOMES = ['succeeded', 'failed', 'cancelled', 'refused'] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];

/** Bounds of one usage query: the range it may span and the request-log page size. */
export const USAGE_LIMITS = {
  maxRangeDays: 366,
  /** `from` when omitted: this many days before `to`. */
  defaultRangeDays: 30,
  logPageMax: 500,
  logPageDefault: 100,
  /** The request log as CSV (one download): at most this many rows, newest first. */
  csvMaxRows: 10_000,
  /**
   * Groups in one summary (issue 22, item 6): an operator's account × day × model summary over a
   * year of a large tenant base is refused beyond this (400 naming what to narrow) instead of
   * answered unbounded.
   */
  summaryMaxGroups: 10_000,
} as const;

/** One group of `GET /v1/usage`: its key (day, model or key), then the sums. */
export interface UsageGroup {
  /** Operators only. */
  account_id?: string;
  /** `YYYY-MM-DD` (UTC) when grouped by day. */
  day?: string;
  model?: string;
  /** The API key's name (grouped by key); a scoped token's requests are its key's. */
  key?: string | null;
  /** Grouped by key: the scoped token's id, null for the key itself. */
  scoped_token_id?: string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_dzd: number;
}

export interface UsageList {
  object: 'list';
  data: UsageGroup[];
}

/** One request of the log: never a prompt or an output. */
export interface UsageLogEntry {
  account_id?: string;
  request_id: string | null;
  job_id: string;
  /** When it was admitted, and when its hold ended (its cost posted). */
  created_at: string;
  ended_at: string;
  endpoint: string | null;
  model: string;
  key: string | null;
  scoped_token_id: string | null;
  priority: boolean;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  cost_dzd: number;
  status: UsageOutcome;
  queue_latency_ms: number | null;
  generation_latency_ms: number | null;
}

export interface UsageLogPage {
  object: 'list';
  data: UsageLogEntry[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  next_cursor: string | null;
}
