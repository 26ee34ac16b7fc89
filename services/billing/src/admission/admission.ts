/**
 * Admission: the request path's credential-to-hold decision. ONE PostgreSQL round trip for a
 * batch of admissions (`billing_admit_batch_v1`, admission as steps over the batch,
 * prisma/functions/): credential, suspension, rate limit, model, token list, token registration
 * and the hold. The statement, the reading of its rows and the refusals are
 * @gateway/ledger-calls' (`admitRows`, `admissionOutcome`), which edge uses for the API keys it
 * admits itself (ADR 0070); what stays here is the scoped tokens' half.
 * Node does only what SQL cannot: the header, the API key's shape and SHA-256, and a scoped
 * token's HS256 signature (with the signing key cached decrypted, SigningKeyCache) and claims.
 *
 * Order of the refusals (the spec's error table, decisions §1): 401 credential (invalid,
 * expired, revoked) → 403 suspended → 429 rate limit → 404 model (not in the catalog, or not
 * of a provider and kind the endpoint serves) → 400 a parameter or content the model does not
 * take → 403 not in the token's list → 429 tokens per minute (the key's, the token's) → 402
 * budget → 402 balance. The 429 of requests per minute is the account's, the key's or the
 * token's, whichever refused. Every request from the rate limit on counts, refused ones
 * included, and every refusal after it carries `details.rateLimit` (the tightest limit). A
 * refusal registers no client-minted token and places no hold.
 */
import {
  admissionOutcome,
  admitRows,
  checkEstimate,
  invalidKey,
  NO_TOKEN,
  statementParams,
  type AdmitRow,
  type AdmitStatementParams,
  type Admitted,
  type CheckedAdmitRequest,
  type CredentialAdmitRequest,
} from '@gateway/ledger-calls';
import { settled, type ItemResult } from '@gateway/runtime';
import type pg from 'pg';
import { requireId } from '../ledger/validation.js';
import { checkTokenLifetime } from '../identity/authenticate.js';
import { SCOPED_TOKEN_PREFIX } from '../identity/jwt.js';
import {
  BAD_SIGNATURE,
  DEFAULT_CLOCK_SKEW_S,
  parseScopedToken,
  verifyParsedToken,
  type ParsedScopedToken,
} from '../identity/scoped-tokens.js';
import {
  bearerCredential,
  looksLikeApiKey,
  newId,
  newScopedTokenId,
  sha256Hex,
} from '../identity/secrets.js';
import type { SigningKey, SigningKeyCache } from '../identity/signing-keys.js';
import type { Clock } from '../identity/types.js';

export type { Admitted };

export type { CredentialAdmitRequest };

/** A credential checked in Node, ready for the function. */
type Credential =
  | { kind: 'api_key'; digest: string }
  | {
      kind: 'scoped_token';
      parsed: ParsedScopedToken;
      key: SigningKey;
      digest: string;
      models: string[] | null;
      limitMicroDzd: bigint | null;
      expiresAt: Date;
    };

/** One admission of a batch: the bearer credential as sent, and the request. */
export interface AdmissionItem {
  authorization: string | null | undefined;
  request: CredentialAdmitRequest;
}

/** One item's outcome: admitted, or the refusal (a GatewayError) or failure it met. */
export type AdmissionResult = ItemResult<Admitted>;

/** An item checked in Node, ready for the statement. */
interface Prepared {
  credential: Credential;
  request: CheckedAdmitRequest;
}

export class PgAdmission {
  readonly #pool: pg.Pool;
  readonly #keys: SigningKeyCache;
  readonly #clock: Clock;
  readonly #tokenPrefix: string;
  readonly #holdTtlMs: number;
  readonly #clockSkewS: number;

  constructor(deps: {
    pool: pg.Pool;
    keys: SigningKeyCache;
    clock: Clock;
    tokenPrefix: string;
    holdTtlMs: number;
    clockSkewS?: number;
  }) {
    this.#pool = deps.pool;
    this.#keys = deps.keys;
    this.#clock = deps.clock;
    this.#tokenPrefix = deps.tokenPrefix;
    this.#holdTtlMs = deps.holdTtlMs;
    this.#clockSkewS = deps.clockSkewS ?? DEFAULT_CLOCK_SKEW_S;
  }

  async admit(
    authorization: string | null | undefined,
    request: CredentialAdmitRequest,
  ): Promise<Admitted> {
    const [result] = await this.admitMany([{ authorization, request }]);
    if (!result) throw new Error('admission: no result');
    if (!result.ok) throw result.error;
    return result.value;
  }

  /**
   * Admissions in one PostgreSQL round trip and transaction (admission-repository.ts), each with
   * its own outcome: a refusal or a failure of one item never fails another. A statement that
   * fails as a whole (a defect or a fault in one item) is retried item by item, so that only the
   * failing item fails; nothing of the failed statement was kept.
   */
  async admitMany(items: readonly AdmissionItem[]): Promise<AdmissionResult[]> {
    const prepared = await Promise.all(items.map((item) => settled(() => this.#prepare(item))));
    const ready = prepared.flatMap((entry, index) => (entry.ok ? [{ index, ...entry.value }] : []));
    const rows = await this.#rows(ready);
    const results: AdmissionResult[] = prepared.map((entry) =>
      entry.ok ? { ok: false, error: new Error('admission: not run') } : entry,
    );
    await Promise.all(
      ready.map(async (item, position) => {
        results[item.index] = await settled(async () => {
          const row = await this.#retryChangedKey(item, rows[position]);
          return admissionOutcome(row, item.credential, item.request);
        });
      }),
    );
    return results;
  }

  /** The credential checked in Node, the estimate and the hold id: ready for the statement. */
  async #prepare({ authorization, request }: AdmissionItem): Promise<Prepared> {
    const credential = await this.#credential(bearerCredential(authorization));
    const estimate = checkEstimate(request.estimate);
    const holdId =
      request.holdId === undefined ? newId('hold') : requireId('holdId', request.holdId);
    return { credential, request: { ...request, estimate, holdId } };
  }

  /** Each item's row (or why it has none): admitRows, @gateway/ledger-calls. */
  #rows(items: readonly Prepared[]): Promise<(AdmitRow | Error)[]> {
    const now = this.#clock();
    return admitRows(
      this.#pool,
      items.map((item) => this.#params(item, now)),
      now.getTime(),
    );
  }

  /**
   * A scoped token whose signing key was regenerated or deleted since it was cached: the key is
   * read again and the token verified again, once.
   */
  async #retryChangedKey(item: Prepared, row: AdmitRow | Error | undefined): Promise<AdmitRow> {
    if (row === undefined || row instanceof Error) throw row ?? new Error('admission: no row');
    const { credential } = item;
    if (row.outcome !== 'key_changed' || credential.kind !== 'scoped_token') return row;
    const fresh = await this.#scopedToken(credential.parsed, credential.digest, false);
    const [again] = await this.#rows([{ credential: fresh, request: item.request }]);
    if (again === undefined || again instanceof Error)
      throw again ?? new Error('admission: no row');
    if (again.outcome === 'key_changed') throw invalidKey(BAD_SIGNATURE.reason);
    return again;
  }

  async #credential(credential: string): Promise<Credential> {
    if (!credential.startsWith(SCOPED_TOKEN_PREFIX)) {
      if (!looksLikeApiKey(credential)) throw invalidKey('Invalid API key');
      return { kind: 'api_key', digest: sha256Hex(credential) };
    }
    const parsed = parseScopedToken(credential, this.#tokenPrefix);
    if (!parsed.ok) throw invalidKey(parsed.reason);
    return this.#scopedToken(parsed, sha256Hex(credential), true);
  }

  /** Signature (cached key first; on failure the key is read again), claims, lifetime. */
  async #scopedToken(parsed: ParsedScopedToken, digest: string, useCache: boolean) {
    const { accountId, keyName } = parsed.kid;
    const nowS = Math.floor(this.#clock().getTime() / 1000);
    const verify = (key: SigningKey) =>
      verifyParsedToken(parsed, key.rawKey, nowS, this.#tokenPrefix, this.#clockSkewS);
    let key = useCache ? this.#keys.cached(accountId, keyName) : undefined;
    let read = key ? verify(key) : BAD_SIGNATURE;
    if (!read.ok && read.reason === BAD_SIGNATURE.reason) {
      key = (await this.#keys.load(accountId, keyName)) ?? undefined;
      read = key ? verify(key) : BAD_SIGNATURE;
    }
    if (!read.ok || !key) throw invalidKey(read.ok ? BAD_SIGNATURE.reason : read.reason);
    checkTokenLifetime(read.claims.exp, nowS, this.#clockSkewS);
    return {
      kind: 'scoped_token' as const,
      parsed,
      key,
      digest,
      models: read.claims.models,
      limitMicroDzd: read.claims.spendingLimitMicroDzd,
      expiresAt: new Date(read.claims.exp * 1000),
    };
  }

  #params({ credential, request }: Prepared, now: Date): AdmitStatementParams {
    const token =
      credential.kind === 'api_key'
        ? NO_TOKEN
        : {
            accountId: credential.parsed.kid.accountId,
            signingKeyId: credential.key.id,
            signingKeyDigest: credential.key.keyDigest,
            tokenDigest: credential.digest,
            tokenModels: credential.models,
            tokenLimitMicroDzd: credential.limitMicroDzd,
            tokenExpiresAt: credential.expiresAt,
            newTokenId: newScopedTokenId(),
          };
    const keyDigest = credential.kind === 'api_key' ? credential.digest : null;
    return statementParams({ keyDigest, token }, request, { now, holdTtlMs: this.#holdTtlMs });
  }
}
