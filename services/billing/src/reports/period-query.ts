/**
 * `?from=&to=&time_zone=&limit=&cursor=` of the period report, checked: dates as YYYY-MM-DD
 * (`to` inclusive, not before `from`, at most a year after it), an IANA zone name (the budgets'
 * rule: canonical Area/Location or UTC, so PostgreSQL and every reader mean the same zone).
 */
import {
  GatewayError,
  REPORT_ACCOUNTS_PAGE_MAX,
  REPORT_MAX_DAYS,
  TIME_ZONE_PATTERN,
} from '@gateway/contracts';
import type { PeriodQuery } from './report-repository.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const ZONE = new RegExp(TIME_ZONE_PATTERN);
const DAY_MS = 86_400_000;
const ACCOUNT_ID_MAX_LENGTH = 64;

const invalid = (message: string, param: string) =>
  new GatewayError('invalid_request_body', message, { param });

function dateParam(value: unknown, param: string): string {
  if (typeof value !== 'string' || !DATE.test(value)) {
    throw invalid(`${param} must be a date, YYYY-MM-DD`, param);
  }
  const parsed = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== value) {
    throw invalid(`${param} is not a calendar date`, param);
  }
  return value;
}

function zoneParam(value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !ZONE.test(value) || !knownZone(value)) {
    throw invalid(
      'time_zone must be an IANA zone name such as Africa/Algiers, or UTC',
      'time_zone',
    );
  }
  return value;
}

function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function limitParam(value: unknown): number {
  if (value === undefined) return REPORT_ACCOUNTS_PAGE_MAX;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > REPORT_ACCOUNTS_PAGE_MAX) {
    throw invalid(`limit must be an integer from 1 to ${REPORT_ACCOUNTS_PAGE_MAX}`, 'limit');
  }
  return limit;
}

function cursorParam(value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || value === '' || value.length > ACCOUNT_ID_MAX_LENGTH) {
    throw invalid('cursor must be the next_cursor of the previous page', 'cursor');
  }
  return value;
}

export function periodQueryOf(query: Record<string, unknown>, defaultZone: string): PeriodQuery {
  const from = dateParam(query.from, 'from');
  const to = dateParam(query.to, 'to');
  const days = (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;
  if (days < 1) throw invalid('to must not be before from', 'to');
  if (days > REPORT_MAX_DAYS) {
    throw invalid(`a report covers at most ${REPORT_MAX_DAYS} days`, 'to');
  }
  return {
    from,
    to,
    timeZone: zoneParam(query.time_zone, defaultZone),
    limit: limitParam(query.limit),
    after: cursorParam(query.cursor),
  };
}
