/**
 * The usage API's answers from the stored records: grouped sums (`GET /v1/usage`, operators'
 * `/admin/v1/usage`) and the request log, in the public shapes of @gateway/contracts
 * (usage-api.ts). Money stays integer µDZD until the answer is rendered.
 */
import {
  GatewayError,
  microDzdToDzd,
  USAGE_LIMITS,
  type UsageGroup,
  type UsageList,
  type UsageLogEntry,
  type UsageLogPage,
  type UsageOutcome,
} from '@gateway/contracts';
import {
  encodeLogCursor,
  parseLogQuery,
  parseUsageQuery,
  type UsageLogQuery,
  type UsageQuery,
} from './query.js';
import type { UsageLogRow, UsageStore, UsageSumRow } from './usage-store.js';

const DAY_MS = 86_400_000;

export interface UsageService {
  /** `scope.accountId`: that account's usage only (what a customer may see); else operators'. */
  summary(query: Record<string, unknown>, scope: { accountId?: string }): Promise<UsageList>;
  log(query: Record<string, unknown>, scope: { accountId?: string }): Promise<UsageLogPage>;
  /** Deletes records older than the retention; returns how many. */
  purgeExpired(): Promise<number>;
}

export interface UsageServiceDeps {
  store: UsageStore;
  clock: () => Date;
  retentionDays: number;
  /** Groups one summary may answer; `USAGE_LIMITS.summaryMaxGroups` by default. */
  summaryMaxGroups?: number;
}

function groupOf(row: UsageSumRow): UsageGroup {
  return {
    ...(row.account_id === undefined ? {} : { account_id: row.account_id }),
    ...(row.day === undefined ? {} : { day: row.day }),
    ...(row.model === undefined ? {} : { model: row.model }),
    ...('key' in row ? { key: row.key ?? null, scoped_token_id: row.scoped_token_id ?? null } : {}),
    requests: Number(row.requests),
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    cost_dzd: microDzdToDzd(BigInt(row.cost_micro_dzd)),
    refunded_dzd: microDzdToDzd(BigInt(row.refunded_micro_dzd)),
  };
}

const numberOrNull = (value: string | null) => (value === null ? null : Number(value));

function entryOf(row: UsageLogRow, operator: boolean): UsageLogEntry {
  return {
    ...(operator ? { account_id: row.account_id } : {}),
    request_id: row.request_id,
    job_id: row.hold_id,
    created_at: row.created_at.toISOString(),
    ended_at: row.ended_at.toISOString(),
    endpoint: row.endpoint,
    model: row.model,
    key: row.api_key_name,
    scoped_token_id: row.scoped_token_id,
    priority: row.priority,
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    reasoning_tokens: Number(row.reasoning_tokens),
    cost_dzd: microDzdToDzd(BigInt(row.cost_micro_dzd)),
    refunded_dzd: microDzdToDzd(BigInt(row.refunded_micro_dzd)),
    status: row.outcome as UsageOutcome,
    queue_latency_ms: numberOrNull(row.queue_latency_ms),
    generation_latency_ms: numberOrNull(row.generation_latency_ms),
    stored: row.stored,
  };
}

/** A customer's query is pinned to their account whatever the query string says. */
function scoped<T extends UsageQuery | UsageLogQuery>(query: T, scope: { accountId?: string }): T {
  return scope.accountId === undefined ? query : { ...query, accountId: scope.accountId };
}

export function createUsageService(deps: UsageServiceDeps): UsageService {
  return {
    async summary(query, scope) {
      const operator = scope.accountId === undefined;
      const parsed = scoped(parseUsageQuery(query, deps.clock(), operator), scope);
      const max = deps.summaryMaxGroups ?? USAGE_LIMITS.summaryMaxGroups;
      const rows = await deps.store.sums(parsed, operator, max + 1);
      if (rows.length > max) {
        throw new GatewayError(
          'invalid_request_body',
          `The summary has more than ${max} groups: narrow from/to, filter by account_id, or ` +
            'group by fewer fields',
          { param: 'from' },
        );
      }
      return { object: 'list', data: rows.map(groupOf) };
    },
    async log(query, scope) {
      const operator = scope.accountId === undefined;
      const parsed = scoped(parseLogQuery(query, deps.clock(), operator), scope);
      const rows = await deps.store.log(parsed);
      const page = rows.slice(0, parsed.limit);
      const last = page.at(-1);
      const more = rows.length > parsed.limit && last !== undefined;
      return {
        object: 'list',
        data: page.map((row) => entryOf(row, operator)),
        next_cursor: more
          ? encodeLogCursor({ endedAt: last.ended_at, holdId: last.hold_id })
          : null,
      };
    },
    purgeExpired: () =>
      deps.store.purge(new Date(deps.clock().getTime() - deps.retentionDays * DAY_MS)),
  };
}
