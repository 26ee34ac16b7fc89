import { GatewayError, microDzdToDzd } from '@gateway/contracts';
import type { Principal } from '../identity/types.js';
import type { Balance } from '../ledger/index.js';

/**
 * JSON for the internal API. Money crosses service boundaries as strings of integer
 * micro-dinar (JSON numbers cannot carry every int64 exactly); dates as ISO 8601.
 */
export function toWire(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
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

/** Reads back a principal that billing itself issued from `authenticate`. */
export function principalFromWire(value: unknown): Principal {
  if (
    !isRecord(value) ||
    typeof value.accountId !== 'string' ||
    typeof value.apiKeyName !== 'string'
  ) {
    throw bad('principal');
  }
  const kind = value.kind === 'scoped_token' ? 'scoped_token' : 'api_key';
  const principal: Principal = {
    accountId: value.accountId,
    kind,
    apiKeyName: value.apiKeyName,
    rateLimitPerMinute: Number(value.rateLimitPerMinute),
    webhookFormat: value.webhookFormat === 'B' ? 'B' : 'A',
  };
  if (kind === 'scoped_token') {
    const token = value.token;
    const registered = isRecord(token) && (token.id === null || typeof token.id === 'string');
    if (!registered || typeof token.digest !== 'string') throw bad('principal.token');
    principal.token = {
      id: token.id as string | null,
      digest: token.digest,
      models: Array.isArray(token.models) ? token.models.map(String) : null,
      spendingLimitMicroDzd:
        typeof token.spendingLimitMicroDzd === 'string'
          ? BigInt(token.spendingLimitMicroDzd)
          : null,
      expiresAt: new Date(String(token.expiresAt)),
    };
  }
  return principal;
}

/** The public balance shape (decisions §3): DZD numbers with up to 6 decimals. */
export function balanceToJson(balance: Balance) {
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

export function requiredCount(body: unknown, field: string): number {
  const value = isRecord(body) ? body[field] : undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw bad(field);
  return value;
}

export function optionalDate(value: unknown, param: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(String(value));
  if (Number.isNaN(date.getTime())) throw bad(param);
  return date;
}

/**
 * An optional array field whose items must come from `allowed`: `{}` when absent, else
 * `{[field]: items}` (spread into the request). Anything else is 400 `invalid_request_body`.
 */
export function optionalEnumList<F extends string, T extends string>(
  body: unknown,
  field: F,
  allowed: readonly T[],
): Partial<Record<F, T[]>> {
  const value = isRecord(body) ? body[field] : undefined;
  if (value === undefined) return {};
  const ok =
    Array.isArray(value) && value.every((item) => (allowed as readonly unknown[]).includes(item));
  if (!ok) throw bad(field);
  return { [field]: value as T[] } as Partial<Record<F, T[]>>;
}

/** Longest string `optionalShortString` accepts (names, not free text). */
const SHORT_STRING_MAX_LENGTH = 128;

/** An optional non-empty string of at most 128 characters: `{}` when absent (spread it). */
export function optionalShortString<F extends string>(
  body: unknown,
  field: F,
): Partial<Record<F, string>> {
  const value = isRecord(body) ? body[field] : undefined;
  if (value === undefined) return {};
  if (typeof value !== 'string' || value.length === 0 || value.length > SHORT_STRING_MAX_LENGTH) {
    throw bad(field);
  }
  return { [field]: value } as Partial<Record<F, string>>;
}
