import { GatewayError, microDzdToDzd } from '@gateway/contracts';
import type {
  AdmissionResponse,
  BalanceResponse,
  Caller,
  CatalogEntry,
  RefundResponse,
  SettleResponse,
  VoidResponse,
} from '@gateway/contracts';
import type { Admission } from '../identity/admit.js';
import type { CatalogModel, Principal } from '../identity/types.js';
import type { Balance, RefundResult, SettleResult, VoidResult } from '../ledger/index.js';

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

/** Who is calling, as edge needs it (never the token's digest or limits). */
export function callerOf(principal: Principal): Caller {
  return {
    accountId: principal.accountId,
    kind: principal.kind,
    apiKeyName: principal.apiKeyName,
    webhookFormat: principal.webhookFormat,
    tokenModels: principal.token?.models ?? null,
  };
}

/** The contract's admission answer. */
export function admissionToWire(principal: Principal, admission: Admission): AdmissionResponse {
  return {
    caller: callerOf(principal),
    hold: {
      id: admission.hold.id,
      amountMicroDzd: admission.hold.amountMicroDzd.toString(),
      expiresAt: admission.hold.expiresAt.toISOString(),
    },
    model: {
      id: admission.model.id,
      kind: admission.model.kind,
      provider: admission.model.provider,
      updatedAt: admission.model.updatedAt.toISOString(),
    },
    rateLimit: admission.rateLimit,
    replayed: admission.hold.replayed,
    ...(admission.hold.replayed
      ? {}
      : {
          prices: {
            inputMicroDzdPerM: admission.model.inputPriceMicroDzdPerM.toString(),
            outputMicroDzdPerM: admission.model.outputPriceMicroDzdPerM.toString(),
          },
        }),
  };
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

/*
 * The hold answers carry what the contract names, nothing more: the journal transaction and the
 * posted credits and debits stay in billing.
 */

export function settleToWire(result: SettleResult): SettleResponse {
  const { balance } = result;
  return {
    holdId: result.holdId,
    costMicroDzd: result.costMicroDzd.toString(),
    releasedMicroDzd: result.releasedMicroDzd.toString(),
    balance: {
      balanceMicroDzd: balance.balanceMicroDzd.toString(),
      pendingMicroDzd: balance.pendingMicroDzd.toString(),
      availableMicroDzd: balance.availableMicroDzd.toString(),
    },
    replayed: result.replayed,
  };
}

export function voidToWire(result: VoidResult): VoidResponse {
  return { holdId: result.holdId, status: result.status, replayed: result.replayed };
}

export function refundToWire(result: RefundResult): RefundResponse {
  return {
    holdId: result.holdId,
    status: result.status,
    refundedMicroDzd: result.refundedMicroDzd.toString(),
    replayed: result.replayed,
  };
}

/** A catalog entry as edge and the worker read it: prices and media rules stay in billing. */
export function catalogEntryToWire(model: CatalogModel): CatalogEntry {
  return {
    id: model.id,
    kind: model.kind,
    provider: model.provider,
    protocol: model.protocol,
    upstreamModel: model.upstreamModel,
    maxOutputTokens: model.maxOutputTokens,
    nodes: model.nodes.map((node) =>
      node.weight === undefined ? { url: node.url } : { url: node.url, weight: node.weight },
    ),
    updatedAt: model.updatedAt.toISOString(),
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
