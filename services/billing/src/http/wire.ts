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

const snakeCase = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * JSON for the operator API (`/admin/v1`, public to operators): as `toWire`, with snake_case
 * keys like the rest of the public API (`amountMicroDzd` → `amount_micro_dzd`).
 */
export function toOperatorWire(value: unknown): unknown {
  const wire = toWire(value);
  const rename = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(rename);
    if (!isRecord(item)) return item;
    return Object.fromEntries(Object.entries(item).map(([k, v]) => [snakeCase(k), rename(v)]));
  };
  return rename(wire);
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
