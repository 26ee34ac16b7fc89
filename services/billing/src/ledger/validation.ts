import { GatewayError, MAX_EXACT_JSON_MICRO_DZD } from '@gateway/contracts';

/** Longest id, key or reference the ledger accepts. */
export const MAX_TEXT_LENGTH = 200;
export const MAX_REFERENCE_LENGTH = 500;

/** 400 `invalid_request_body` naming the offending parameter. */
export function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request_body', message, { param });
}

export function requireId(param: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_TEXT_LENGTH) {
    throw invalid(
      param,
      `${param} must be a non-empty string of at most ${MAX_TEXT_LENGTH} characters`,
    );
  }
  return value;
}

/** An amount in µDZD: a bigint within [min, MAX_EXACT_JSON_MICRO_DZD]. */
export function requireAmount(param: string, value: unknown, min: bigint): bigint {
  if (typeof value !== 'bigint') throw invalid(param, `${param} must be an integer amount of µDZD`);
  if (value < min) throw invalid(param, `${param} must be at least ${min} µDZD`);
  if (value > MAX_EXACT_JSON_MICRO_DZD) throw invalid(param, `${param} is too large`);
  return value;
}

export function requireReference(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || value.length > MAX_REFERENCE_LENGTH) {
    throw invalid(
      'reference',
      `reference must be a string of at most ${MAX_REFERENCE_LENGTH} characters`,
    );
  }
  return value;
}

export function requireDate(param: string, value: unknown): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw invalid(param, `${param} must be a valid date`);
  }
  return value;
}

export function requireRange(from: Date, to: Date): void {
  if (from.getTime() > to.getTime()) throw invalid('from', '`from` must not be after `to`');
}

export function requireLimit(value: unknown, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw invalid('limit', `limit must be an integer between 1 and ${max}`);
  }
  return value;
}

/** A query string's `?limit=`: decimal digits, 1..max, `fallback` when absent. */
export function queryLimit(value: unknown, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  const limit = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= max)) {
    throw invalid('limit', `limit must be an integer from 1 to ${max}`);
  }
  return limit;
}
