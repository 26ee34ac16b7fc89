/**
 * API keys admitted in billing's database by the caller itself (edge, ADR 0070), through
 * `billing_admit_api_keys_v1`, the one admission function its role may execute: the key's shape
 * and digest in Node, then one statement for the batch, each row read exactly as billing reads
 * it (admission-answer.ts), and the key's last use written off the request's path. Scoped tokens
 * are not admitted here: verifying one needs its signing key in clear, which only billing holds.
 */
import { sha256Hex } from '@gateway/crypto';
import type pg from 'pg';
import { admissionOutcome, checkEstimate, type Admitted } from './admission-answer.js';
import { invalidKey } from './admission-refusals.js';
import {
  DEFAULT_HOLD_TTL_MS,
  type CheckedAdmitRequest,
  type CredentialAdmitRequest,
} from './admission-types.js';
import { admitRows, NO_TOKEN, statementParams, type AdmitRow } from './admit-statement.js';
import { bearerCredential, looksLikeApiKey } from './api-keys.js';
import type { ApiKeyLastUsed } from './last-used.js';

export interface ApiKeyAdmissionOptions {
  /** As edge's admission role (`ADMISSION_DATABASE_URL`). */
  pool: pg.Pool;
  clock?: () => Date;
  /** How long an admitted hold lives unless published: billing's `HOLD_TTL_MS`. */
  holdTtlMs?: number;
  /** The keys' last use; none written when absent. */
  lastUsed?: ApiKeyLastUsed;
}

/** One admission: the `Authorization` header as sent, and the request with its hold id. */
export interface ApiKeyAdmissionItem {
  authorization: string | null | undefined;
  request: CredentialAdmitRequest & { holdId: string };
}

/** An item's admission, its refusal (a GatewayError), or the failure it met. */
export type ApiKeyAdmissionResult = { ok: true; value: Admitted } | { ok: false; error: unknown };

/** Whether an `Authorization` header carries an API key, which the caller may admit itself. */
export function carriesApiKey(authorization: string | null | undefined): boolean {
  try {
    return looksLikeApiKey(bearerCredential(authorization));
  } catch {
    return false;
  }
}

export function createApiKeyAdmission(options: ApiKeyAdmissionOptions) {
  const clock = options.clock ?? (() => new Date());
  const holdTtlMs = options.holdTtlMs ?? DEFAULT_HOLD_TTL_MS;

  /** The key's digest and the checked request (a refusal of this item alone otherwise). */
  const prepare = ({ authorization, request }: ApiKeyAdmissionItem) => {
    const credential = bearerCredential(authorization);
    if (!looksLikeApiKey(credential)) throw invalidKey('Invalid API key');
    const checked: CheckedAdmitRequest = { ...request, estimate: checkEstimate(request.estimate) };
    return { digest: sha256Hex(credential), request: checked };
  };

  const outcome = (
    row: AdmitRow | Error | undefined,
    digest: string,
    request: CheckedAdmitRequest,
  ): ApiKeyAdmissionResult => {
    if (row === undefined || row instanceof Error) {
      return { ok: false, error: row ?? new Error('admission: no row') };
    }
    try {
      const admitted = admissionOutcome(row, { kind: 'api_key', digest }, request);
      options.lastUsed?.touch(admitted.principal.accountId, admitted.principal.apiKeyName);
      return { ok: true, value: admitted };
    } catch (error) {
      return { ok: false, error };
    }
  };

  /** Each item's result, in the items' order: one statement for all the items that are ready. */
  return async function admitApiKeys(
    items: readonly ApiKeyAdmissionItem[],
  ): Promise<ApiKeyAdmissionResult[]> {
    const results: ApiKeyAdmissionResult[] = [];
    const ready: { index: number; digest: string; request: CheckedAdmitRequest }[] = [];
    items.forEach((item, index) => {
      try {
        ready.push({ index, ...prepare(item) });
      } catch (error) {
        results[index] = { ok: false, error };
      }
    });
    const now = clock();
    const params = ready.map(({ digest, request }) =>
      statementParams({ keyDigest: digest, token: NO_TOKEN }, request, { now, holdTtlMs }),
    );
    const rows = await admitRows(options.pool, params, now.getTime(), 'api_keys');
    ready.forEach(({ index, digest, request }, position) => {
      results[index] = outcome(rows[position], digest, request);
    });
    return results;
  };
}

export type AdmitApiKeys = ReturnType<typeof createApiKeyAdmission>;
