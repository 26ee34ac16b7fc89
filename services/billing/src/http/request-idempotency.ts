import { GatewayError } from '@gateway/contracts';
// The claim's key (`requestHash`: SHA-256 hex of method, path and body, computed by edge), the
// stored answer (text as is, binary as base64) and the claim's outcome are the contract's.
import type { IdempotencyClaim, IdempotencyRef, StoredResponse } from '@gateway/contracts';
import type { Keyring, SealedValue } from '@gateway/crypto';
import {
  claimIdempotencyKey,
  completeSealedClaim,
  IN_PROGRESS,
  purgeIdempotencyRecords,
  readIdempotencyRecord,
  releaseClaim,
  settleLapsedClaim,
  type SettledLapsedClaim,
} from '../idempotency/idempotency-repository.js';
import { newId } from '../identity/secrets.js';
import type { Db } from '../ledger/ledger-repository.js';

/**
 * Idempotency of public POST requests (decisions §3), kept here so that every edge replica sees
 * the same keys. Edge claims `(account, key)` with a hash of the request before doing any work,
 * stores the response once it has one, or releases the claim when nothing was charged so the
 * client may retry with the same key. Records live in `idempotency_records` under their own
 * scope: a claim is a lease (`response_status` 0, expiring after `leaseMs`, so a crashed edge
 * does not lock a key for a day); a completed record is replayed for `ttlMs` (24 h).
 *
 * A stored answer may carry a newly minted scoped token, so it is sealed with the MASTER_KEY
 * keyring, its AAD binding it to its record (scope, account, key and request hash): an answer
 * copied to another record, or altered, does not open, and the replay fails closed (500, nothing
 * served, nothing run again). Expired records are deleted by `purgeExpired`, run on a schedule.
 *
 * A claim names the hold its request places. Edge stores the answer before it sends it, so a
 * claim still in progress past its lease whose hold settled was never answered (edge stopped in
 * between): `settleLapsedClaims` refunds that hold and frees the key (ADR 0067).
 */
export const REQUEST_IDEMPOTENCY_SCOPE = 'edge-request';

export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** Rows deleted per purge statement, and statements per purge run (the rest waits a run). */
const PURGE_BATCH_ROWS = 1_000;
const PURGE_MAX_BATCHES = 50;
/** Lapsed claims ended per run (each its own transaction); the rest waits a run. */
const LAPSED_CLAIMS_PER_RUN = 200;

export interface RequestIdempotencyDeps {
  /** Runs `work` with a database handle (one short transaction). */
  run<T>(work: (db: Db) => Promise<T>): Promise<T>;
  clock: () => Date;
  /** Seals stored answers (MASTER_KEY). */
  keyring: Keyring;
  ttlMs?: number;
}

export class RequestIdempotency {
  readonly #deps: RequestIdempotencyDeps;
  readonly #ttlMs: number;

  constructor(deps: RequestIdempotencyDeps) {
    this.#deps = deps;
    this.#ttlMs = deps.ttlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
  }

  /** Claims the key, or answers with the stored response; 409 for a conflict. */
  async claim(ref: IdempotencyRef, leaseMs: number, holdId?: string): Promise<IdempotencyClaim> {
    const now = this.#deps.clock();
    const recordKey = storageKey(ref);
    const owned = await this.#deps.run((db) =>
      claimIdempotencyKey(db, {
        scope: REQUEST_IDEMPOTENCY_SCOPE,
        key: recordKey,
        requestHash: ref.requestHash,
        now,
        expiresAt: new Date(now.getTime() + leaseMs),
        ...(holdId === undefined ? {} : { holdId }),
      }),
    );
    if (owned) return { outcome: 'claimed' };
    const stored = await this.#deps.run((db) =>
      readIdempotencyRecord(db, REQUEST_IDEMPOTENCY_SCOPE, recordKey),
    );
    if (stored && stored.requestHash !== ref.requestHash) {
      throw new GatewayError(
        'idempotency_key_conflict',
        'This Idempotency-Key was already used with a different request.',
        { param: 'Idempotency-Key' },
      );
    }
    if (!stored || stored.responseStatus === IN_PROGRESS) {
      throw new GatewayError('conflict', 'A request with this Idempotency-Key is in progress.', {
        param: 'Idempotency-Key',
      });
    }
    if (!stored.sealed) {
      // Written by the previous release (before answers were sealed); gone within its TTL.
      return { outcome: 'replay', response: stored.responseBody as StoredResponse };
    }
    return { outcome: 'replay', response: this.#open(stored.sealed, ref) };
  }

  /** Stores the response of a claimed key for `ttlMs`; 409 when the claim was lost. */
  async complete(ref: IdempotencyRef, response: StoredResponse): Promise<void> {
    const now = this.#deps.clock();
    const expiresAt = new Date(now.getTime() + this.#ttlMs);
    const sealed = this.#deps.keyring.seal(JSON.stringify(response), answerAad(ref));
    const completed = await this.#deps.run((db) =>
      completeSealedClaim(db, claimOf(ref), { status: response.status, sealed, expiresAt }),
    );
    if (!completed) {
      throw new GatewayError('conflict', 'The Idempotency-Key claim was lost (lease expired).');
    }
  }

  /** Drops a claim that produced nothing worth replaying; a no-op when it is not ours. */
  async release(ref: IdempotencyRef): Promise<void> {
    await this.#deps.run((db) => releaseClaim(db, claimOf(ref)));
  }

  /**
   * Ends claims left in progress past their lease whose hold is no longer pending, at most
   * `max` per run, one short transaction each: a settled hold is refunded (its answer was never
   * stored, so never sent) and the key is freed. Returns what was ended. Run on a schedule.
   */
  async settleLapsedClaims(max = LAPSED_CLAIMS_PER_RUN): Promise<SettledLapsedClaim[]> {
    const ended: SettledLapsedClaim[] = [];
    while (ended.length < max) {
      const now = this.#deps.clock();
      const claim = await this.#deps.run((db) =>
        settleLapsedClaim(db, REQUEST_IDEMPOTENCY_SCOPE, now, newId('txn')),
      );
      if (claim === null) break;
      ended.push(claim);
    }
    return ended;
  }

  /**
   * Deletes records past their retention (every scope), in bounded batches; returns how many.
   * Run on a schedule (service.ts), not on the request path.
   */
  async purgeExpired(): Promise<number> {
    let purged = 0;
    for (let batch = 0; batch < PURGE_MAX_BATCHES; batch++) {
      const now = this.#deps.clock();
      const count = await this.#deps.run((db) =>
        purgeIdempotencyRecords(db, now, PURGE_BATCH_ROWS),
      );
      purged += count;
      if (count < PURGE_BATCH_ROWS) break;
    }
    return purged;
  }

  #open(sealed: SealedValue, ref: IdempotencyRef): StoredResponse {
    try {
      const text = this.#deps.keyring.open(sealed, answerAad(ref)).toString('utf8');
      return JSON.parse(text) as StoredResponse;
    } catch (error) {
      throw new GatewayError(
        'internal_error',
        'The answer stored for this Idempotency-Key cannot be opened.',
        { cause: error },
      );
    }
  }
}

// Keys are per account: two accounts may use the same key. Account ids contain no space.
const storageKey = (ref: IdempotencyRef): string => `${ref.accountId} ${ref.key}`;

/** The record a request's claim is, in the repository's terms. */
const claimOf = (ref: IdempotencyRef) => ({
  scope: REQUEST_IDEMPOTENCY_SCOPE,
  key: storageKey(ref),
  requestHash: ref.requestHash,
});

/** Binds a sealed answer to its record: the same request (hash) under the same key. */
const answerAad = (ref: IdempotencyRef): string =>
  `${REQUEST_IDEMPOTENCY_SCOPE} ${storageKey(ref)} ${ref.requestHash}`;
