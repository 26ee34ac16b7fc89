import pRetry, { AbortError } from 'p-retry';
import {
  GatewayError,
  assertNormalizedPath,
  gatewayErrorFromWire,
  modelIdPath,
  pathSegment,
} from '@gateway/contracts';
import { REQUEST_ID_HEADER, currentRequestId } from '@gateway/runtime';
import type { CatalogEntry, SettleOutcome, VoidOutcome } from './types.js';
import { catalogEntryFromWire } from './types.js';

export interface BillingClientOptions {
  baseUrl: string;
  internalToken: string;
  timeoutMs: number;
  catalogCacheTtlMs: number;
  /** Attempts per call on network errors and 5xx (settlement must survive a billing blip). */
  attempts?: number;
  minRetryDelayMs?: number;
}

export interface BillingClient {
  getModel(modelId: string): Promise<CatalogEntry>;
  settle(
    holdId: string,
    usage: { inputTokens: number; outputTokens: number },
  ): Promise<SettleOutcome>;
  void(holdId: string): Promise<VoidOutcome>;
}

function errorFromAnswer(status: number, body: unknown): GatewayError {
  const wire = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (wire && typeof wire.code === 'string' && typeof wire.message === 'string') {
    return gatewayErrorFromWire({ code: wire.code, message: wire.message });
  }
  return new GatewayError('internal_error', `billing answered HTTP ${status}`);
}

/**
 * Billing could not be reached or failed (network error, timeout, 5xx) after the retries: an
 * infrastructure fault, not an answer about the job. The job is retried later, not failed.
 */
export class BillingUnavailable extends Error {
  override readonly name = 'BillingUnavailable';
}

/** A billing answer that retrying cannot change (4xx): surfaced as the GatewayError it carries. */
class FinalAnswer extends Error {
  constructor(readonly error: GatewayError) {
    super(error.message);
  }
}

/** The job's request id (job-consumer runs each job in its scope), so billing logs it too. */
function requestIdHeader(): Record<string, string> {
  const requestId = currentRequestId();
  return requestId === undefined ? {} : { [REQUEST_ID_HEADER]: requestId };
}

export function createBillingClient(options: BillingClientOptions): BillingClient {
  const base = options.baseUrl.replace(/\/+$/, '') + '/internal/v1';
  const catalog = new Map<string, { entry: CatalogEntry; fetchedAtMs: number }>();

  async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const attempt = async () => {
      const url = new URL(base + path);
      assertNormalizedPath(url, new URL(base).pathname + path);
      const response = await fetch(url, {
        method,
        headers: {
          'X-Internal-Token': options.internalToken,
          ...requestIdHeader(),
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      const json: unknown = await response.json().catch(() => undefined);
      if (response.ok) return json;
      const error = errorFromAnswer(response.status, json);
      if (response.status >= 500) throw error;
      throw new AbortError(new FinalAnswer(error));
    };
    try {
      return await pRetry(attempt, {
        retries: (options.attempts ?? 4) - 1,
        minTimeout: options.minRetryDelayMs ?? 200,
        factor: 2,
        randomize: true,
      });
    } catch (error) {
      if (error instanceof FinalAnswer) throw error.error;
      throw new BillingUnavailable(
        `billing ${method} ${path.split('/')[1]}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }

  return {
    async getModel(modelId) {
      const cached = catalog.get(modelId);
      if (cached && Date.now() - cached.fetchedAtMs < options.catalogCacheTtlMs) {
        return cached.entry;
      }
      const entry = catalogEntryFromWire(await call('GET', `/models/${modelIdPath(modelId)}`));
      catalog.set(modelId, { entry, fetchedAtMs: Date.now() });
      return entry;
    },

    async settle(holdId, usage) {
      try {
        const answer = (await call('POST', `/holds/${pathSegment(holdId)}/settle`, usage)) as {
          costMicroDzd: string;
          balance: { balanceMicroDzd: string };
          replayed: boolean;
        };
        return {
          kind: 'settled',
          costMicroDzd: BigInt(answer.costMicroDzd),
          balanceMicroDzd: BigInt(answer.balance.balanceMicroDzd),
          replayed: answer.replayed,
        };
      } catch (error) {
        if (error instanceof GatewayError && error.code === 'conflict') {
          return { kind: 'already_final', reason: error.message };
        }
        throw error;
      }
    },

    async void(holdId) {
      try {
        const answer = (await call('POST', `/holds/${pathSegment(holdId)}/void`)) as {
          status: 'voided' | 'expired';
        };
        return { kind: answer.status };
      } catch (error) {
        if (error instanceof GatewayError && error.code === 'conflict') {
          return { kind: 'already_final', reason: error.message };
        }
        throw error;
      }
    },
  };
}
