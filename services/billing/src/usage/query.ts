/**
 * The usage API's query string, checked once: `from`/`to` as RFC 3339 (with a zone) or
 * `YYYY-MM-DD` (that UTC day's midnight), `[from, to)`, at most USAGE_LIMITS.maxRangeDays;
 * `group_by`; the request log's `limit` and `cursor`. Every refusal is 400
 * `invalid_request_body` naming its parameter.
 */
import { USAGE_GROUP_BY, USAGE_LIMITS, type UsageGroupBy } from '@gateway/contracts';
import { invalid, queryLimit } from '../ledger/validation.js';

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

export interface UsageRange {
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
}

export interface UsageQuery extends UsageRange {
  groupBy: UsageGroupBy;
  /** Operators: one account, or all when absent. */
  accountId?: string;
}

export interface LogCursor {
  endedAt: Date;
  holdId: string;
}

export interface UsageLogQuery extends UsageRange {
  accountId?: string;
  limit: number;
  after?: LogCursor;
}

type Query = Record<string, unknown>;

/** A calendar date that exists (no 2026-02-30). */
function validDay(year: string, month: string, day: string): boolean {
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return (
    date.getUTCFullYear() === Number(year) &&
    date.getUTCMonth() === Number(month) - 1 &&
    date.getUTCDate() === Number(day)
  );
}

export function parseUsageDate(value: unknown, param: string): Date {
  const text = typeof value === 'string' ? value : '';
  const match = DATE.exec(text) ?? DATE_TIME.exec(text);
  const time = match && validDay(match[1]!, match[2]!, match[3]!) ? Date.parse(text) : NaN;
  if (Number.isNaN(time) || (match?.[4] !== undefined && Number(match[4]) > 23)) {
    throw invalid(
      param,
      `${param} must be an RFC 3339 time with a zone or a YYYY-MM-DD date (UTC)`,
    );
  }
  return new Date(time);
}

function single(query: Query, name: string): unknown {
  const value = query[name];
  if (Array.isArray(value)) throw invalid(name, `${name} must be given once`);
  return value;
}

export function parseRange(query: Query, now: Date): UsageRange {
  const toValue = single(query, 'to');
  const fromValue = single(query, 'from');
  const to = toValue === undefined ? now : parseUsageDate(toValue, 'to');
  const from =
    fromValue === undefined
      ? new Date(to.getTime() - USAGE_LIMITS.defaultRangeDays * DAY_MS)
      : parseUsageDate(fromValue, 'from');
  if (from.getTime() >= to.getTime()) throw invalid('from', 'from must be before to');
  if (to.getTime() - from.getTime() > USAGE_LIMITS.maxRangeDays * DAY_MS) {
    throw invalid('to', `The range may span at most ${USAGE_LIMITS.maxRangeDays} days`);
  }
  return { from, to };
}

/** What `?account=` may hold; anything else is a 400 before any lookup. */
export const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

function optionalAccount(query: Query): { accountId?: string } {
  const account = single(query, 'account');
  if (account === undefined) return {};
  if (typeof account !== 'string' || !ACCOUNT_ID_PATTERN.test(account)) {
    throw invalid('account', 'account must be an account id');
  }
  return { accountId: account };
}

export function parseUsageQuery(query: Query, now: Date, operator: boolean): UsageQuery {
  const groupBy = single(query, 'group_by') ?? 'day';
  if (!USAGE_GROUP_BY.includes(groupBy as UsageGroupBy)) {
    throw invalid('group_by', `group_by must be one of ${USAGE_GROUP_BY.join(', ')}`);
  }
  return {
    ...parseRange(query, now),
    groupBy: groupBy as UsageGroupBy,
    ...(operator ? optionalAccount(query) : {}),
  };
}

/** Opaque to clients: base64url of `<epoch ms>.<hold id>`. */
export function encodeLogCursor(cursor: LogCursor): string {
  return Buffer.from(`${cursor.endedAt.getTime()}.${cursor.holdId}`).toString('base64url');
}

function decodeLogCursor(text: unknown): LogCursor {
  const raw = typeof text === 'string' && text.length <= 256 ? text : '';
  const match = /^(\d{1,15})\.([A-Za-z0-9._:-]{1,128})$/.exec(
    Buffer.from(raw, 'base64url').toString('latin1'),
  );
  if (!match) throw invalid('cursor', 'cursor is not a cursor this API returned');
  return { endedAt: new Date(Number(match[1])), holdId: match[2]! };
}

export function parseLogQuery(query: Query, now: Date, operator: boolean): UsageLogQuery {
  const cursor = single(query, 'cursor');
  return {
    ...parseRange(query, now),
    limit: queryLimit(single(query, 'limit'), USAGE_LIMITS.logPageMax, USAGE_LIMITS.logPageDefault),
    ...(cursor === undefined ? {} : { after: decodeLogCursor(cursor) }),
    ...(operator ? optionalAccount(query) : {}),
  };
}
