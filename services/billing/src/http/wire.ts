/**
 * JSON helpers of billing's operator and dashboard routes (and the balance, which edge passes
 * on): plain values with µDZD as strings of integer micro-dinar (`microDzdToWire`, JSON numbers
 * cannot carry every int64 exactly) and dates as ISO 8601, snake_case for the operator API, the
 * public balance in DZD, and request-field readers. The internal API's answers are built beside
 * their routes (internal-routes.ts).
 */
import { GatewayError, microDzdToDzd, microDzdToWire } from '@gateway/contracts';
import type { BalanceResponse } from '@gateway/contracts';
import type { Balance } from '../ledger/index.js';

/** Money crosses service boundaries as µDZD strings; dates as ISO 8601. */
export function toWire(value: unknown): unknown {
  if (typeof value === 'bigint') return microDzdToWire(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toWire);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toWire(v)]));
  }
  return value;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function bad(param: string): GatewayError {
  return new GatewayError('invalid_request_body', `${param} is missing or malformed`, { param });
}

/** The public balance shape (decisions §3): DZD numbers with up to 6 decimals. */
export function balanceToJson(balance: Balance): BalanceResponse {
  return {
    balance_dzd: microDzdToDzd(balance.balanceMicroDzd),
    reserved_dzd: microDzdToDzd(balance.pendingMicroDzd),
    available_dzd: microDzdToDzd(balance.availableMicroDzd),
    currency: 'DZD',
  };
}

export function requiredString(body: unknown, field: string): string {
  const value = isRecord(body) ? body[field] : undefined;
  if (typeof value !== 'string' || value.length === 0) throw bad(field);
  return value;
}

export function optionalDate(value: unknown, param: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(String(value));
  if (Number.isNaN(date.getTime())) throw bad(param);
  return date;
}
