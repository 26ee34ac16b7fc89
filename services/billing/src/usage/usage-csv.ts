/**
 * The request log as CSV (the dashboard's download): every request of the range, newest first,
 * at most USAGE_LIMITS.csvMaxRows (a larger range is cut there; the last line says so). Never a
 * prompt or an output: the same fields as the JSON log.
 */
import { USAGE_LIMITS, type UsageLogEntry } from '@gateway/contracts';
import { csvField, csvRow, csvTextField } from '../ledger/csv.js';
import type { UsageService } from './usage-service.js';

const HEADER = [
  'ended_at',
  'created_at',
  'account_id',
  'request_id',
  'job_id',
  'endpoint',
  'model',
  'key',
  'scoped_token_id',
  'priority',
  'prompt_tokens',
  'completion_tokens',
  'reasoning_tokens',
  'cost_dzd',
  'status',
  'queue_latency_ms',
  'generation_latency_ms',
  // Appended, so readers of the earlier columns by position are unaffected.
  'refunded_dzd',
];

const text = (value: string | number | boolean | null | undefined) =>
  value === null || value === undefined ? '' : csvField(String(value));

function lineOf(entry: UsageLogEntry): string {
  return csvRow([
    text(entry.ended_at),
    text(entry.created_at),
    text(entry.account_id),
    csvTextField(entry.request_id),
    text(entry.job_id),
    text(entry.endpoint),
    csvTextField(entry.model),
    csvTextField(entry.key),
    text(entry.scoped_token_id),
    text(entry.priority),
    text(entry.prompt_tokens),
    text(entry.completion_tokens),
    text(entry.reasoning_tokens),
    text(entry.cost_dzd),
    text(entry.status),
    text(entry.queue_latency_ms),
    text(entry.generation_latency_ms),
    text(entry.refunded_dzd),
  ]);
}

export interface CsvLimits {
  maxRows: number;
  pageRows: number;
}

const LIMITS: CsvLimits = { maxRows: USAGE_LIMITS.csvMaxRows, pageRows: USAGE_LIMITS.logPageMax };

/**
 * Pages through the log (`from`, `to` and, for operators, `account` as for the JSON log; the
 * paging is the CSV's own). More rows than `maxRows`: the first `maxRows`, then a line saying so.
 */
export async function usageLogCsv(
  usage: UsageService,
  query: Record<string, unknown>,
  scope: { accountId?: string },
  limits: CsvLimits = LIMITS,
): Promise<string> {
  const range = { from: query.from, to: query.to, account: query.account };
  let out = csvRow(HEADER);
  let rows = 0;
  let cursor: string | null = null;
  let more = false;
  do {
    const page = await usage.log(
      { ...range, limit: String(limits.pageRows), ...(cursor ? { cursor } : {}) },
      scope,
    );
    for (const entry of page.data.slice(0, limits.maxRows - rows)) out += lineOf(entry);
    more = rows + page.data.length > limits.maxRows;
    rows += page.data.length;
    cursor = page.next_cursor;
  } while (cursor !== null && rows < limits.maxRows);
  if (more || cursor !== null) out += csvRow([`# cut at ${limits.maxRows} rows`]);
  return out;
}
