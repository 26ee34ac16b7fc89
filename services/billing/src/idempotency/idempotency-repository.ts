/**
 * Idempotency's repository: every statement on `idempotency_records`, for both scopes that use
 * it (the operator's credits, `ledger/credits.ts`; edge's public requests,
 * `http/request-idempotency.ts`). Each runs on the caller's Prisma client or transaction.
 */
import { Prisma } from '../db/client.js';
import type { SealedValue } from '@gateway/crypto';
import type { Db } from '../ledger/ledger-repository.js';
import type { IdempotencyClaimInput } from '../ledger/store.js';

/** `response_status` of a claim whose answer is not stored yet. */
export const IN_PROGRESS = 0;

/**
 * Claims (scope, key) for this transaction: true when this caller owns it (new key, or the
 * previous record had expired). The primary key is the arbiter: a concurrent claimer blocks
 * on the INSERT until the owner commits (then it does not own the key) or rolls back (then it
 * does). A lapsed claim that names a hold is not taken over: its hold may be charged for an
 * answer nobody received, and only `settleLapsedClaim` ends it.
 */
export async function claimIdempotencyKey(db: Db, claim: IdempotencyClaimInput): Promise<boolean> {
  const rows = await db.$queryRaw<unknown[]>`
    INSERT INTO idempotency_records (scope, key, request_hash, response_status, response_body,
                                     created_at, expires_at, hold_id)
    VALUES (${claim.scope}, ${claim.key}, ${claim.requestHash}, 0, '{}'::jsonb,
            ${claim.now}::timestamptz, ${claim.expiresAt}::timestamptz, ${claim.holdId ?? null})
    ON CONFLICT (scope, key) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, response_status = 0, response_body = '{}'::jsonb,
          response_ciphertext = NULL, response_nonce = NULL, response_tag = NULL,
          response_key_version = NULL, hold_id = EXCLUDED.hold_id,
          created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
      WHERE idempotency_records.expires_at <= ${claim.now}::timestamptz
        AND NOT ${lapsedWithHold}
    RETURNING 1`;
  return rows.length === 1;
}

/** A claim still in progress that names its request's hold (true past its lease: lapsed). */
const lapsedWithHold = Prisma.sql`(idempotency_records.response_status = ${IN_PROGRESS}::int
  AND idempotency_records.hold_id IS NOT NULL)`;

export interface SettledLapsedClaim {
  holdId: string;
  /**
   * `ledger_refund_hold`'s outcome: `refunded`, or `replayed` / `not_settled` / `not_found`;
   * `delivered` when edge reported the answer sent (nothing refunded).
   */
  outcome: string;
  refundedMicroDzd: bigint;
}

/**
 * Ends one lapsed claim of `scope` whose hold is no longer pending, in the caller's transaction:
 * refunds the hold if it settled (its answer was never stored, so never sent: edge stores
 * before it sends, and reports the hold delivered when it sent without a store billing
 * answered) and deletes the claim, so the key may be used again. The claim is locked
 * first: edge's late `complete` of the same claim either commits before (the claim is no longer
 * in progress and is skipped) or finds it gone (claim lost: edge does not send its answer).
 * Null when there is none.
 */
export async function settleLapsedClaim(
  db: Db,
  scope: string,
  now: Date,
  refundTransactionId: string,
): Promise<SettledLapsedClaim | null> {
  const lapsed = await db.$queryRaw<{ key: string; holdId: string; delivered: boolean }[]>`
    SELECT r.key, r.hold_id AS "holdId", COALESCE(h.answer_delivered_at IS NOT NULL, false) AS delivered
      FROM idempotency_records r LEFT JOIN holds h ON h.id = r.hold_id
     WHERE r.scope = ${scope} AND r.response_status = ${IN_PROGRESS}::int
       AND r.hold_id IS NOT NULL AND r.expires_at <= ${now}::timestamptz
       AND (h.id IS NULL OR h.status <> 'pending')
     ORDER BY r.expires_at
     LIMIT 1
       FOR UPDATE OF r SKIP LOCKED`;
  const claim = lapsed[0];
  if (!claim) return null;
  await db.$executeRaw`
    DELETE FROM idempotency_records WHERE scope = ${scope} AND key = ${claim.key}`;
  // Edge sent the answer while billing did not answer its store (it said so since): no refund.
  if (claim.delivered) return { holdId: claim.holdId, outcome: 'delivered', refundedMicroDzd: 0n };
  const refunds = await db.$queryRaw<{ outcome: string; refunded: bigint | null }[]>`
    SELECT outcome, refunded_micro_dzd AS refunded
      FROM ledger_refund_hold(${claim.holdId}, ${refundTransactionId}, ${now}::timestamptz)`;
  const refund = refunds[0];
  return {
    holdId: claim.holdId,
    outcome: refund?.outcome ?? 'not_found',
    refundedMicroDzd: refund?.outcome === 'refunded' ? BigInt(refund.refunded ?? 0n) : 0n,
  };
}

export interface StoredResponseRecord {
  requestHash: string;
  responseStatus: number;
  responseBody: unknown;
  /** The answer sealed with MASTER_KEY (edge requests); null where `responseBody` holds it. */
  sealed: SealedValue | null;
}

interface StoredRow extends Omit<StoredResponseRecord, 'sealed'> {
  ciphertext: Uint8Array | null;
  nonce: Uint8Array | null;
  tag: Uint8Array | null;
  keyVersion: number | null;
}

export async function readIdempotencyRecord(
  db: Db,
  scope: string,
  key: string,
): Promise<StoredResponseRecord | null> {
  const rows = await db.$queryRaw<StoredRow[]>`
    SELECT request_hash AS "requestHash", response_status AS "responseStatus",
           response_body AS "responseBody", response_ciphertext AS ciphertext,
           response_nonce AS nonce, response_tag AS tag, response_key_version AS "keyVersion"
      FROM idempotency_records WHERE scope = ${scope} AND key = ${key}`;
  const row = rows[0];
  if (!row) return null;
  const { ciphertext, nonce, tag, keyVersion, ...stored } = row;
  const sealed =
    ciphertext && nonce && tag && keyVersion !== null
      ? { ciphertext, nonce, tag, keyVersion }
      : null;
  return { ...stored, sealed };
}

export async function storeIdempotencyResponse(
  db: Db,
  scope: string,
  key: string,
  status: number,
  body: unknown,
): Promise<void> {
  await db.$executeRaw`
    UPDATE idempotency_records
       SET response_status = ${status}::int, response_body = ${JSON.stringify(body)}::jsonb
     WHERE scope = ${scope} AND key = ${key}`;
}

/**
 * Deletes up to `limit` records (every scope) whose retention ended: a short statement however
 * large the backlog, so a purge never holds locks long. An expired record means nothing anymore
 * (a claim takes it over), so deleting it changes no answer; a lapsed claim naming a hold is
 * `settleLapsedClaim`'s to end.
 */
export async function purgeIdempotencyRecords(db: Db, now: Date, limit: number): Promise<number> {
  return db.$executeRaw`
    DELETE FROM idempotency_records
     WHERE ctid = ANY(ARRAY(SELECT ctid FROM idempotency_records
                             WHERE expires_at <= ${now}::timestamptz
                               AND NOT ${lapsedWithHold}
                             LIMIT ${limit}::int))`;
}

/** A claimed record's answer, sealed (edge requests); false when the claim was lost. */
export async function completeSealedClaim(
  db: Db,
  claim: { scope: string; key: string; requestHash: string },
  answer: { status: number; sealed: SealedValue; expiresAt: Date },
): Promise<boolean> {
  const { sealed } = answer;
  const updated = await db.$executeRaw`
    UPDATE idempotency_records
       SET response_status = ${answer.status}::int,
           response_body = '{}'::jsonb,
           response_ciphertext = ${Buffer.from(sealed.ciphertext)},
           response_nonce = ${Buffer.from(sealed.nonce)},
           response_tag = ${Buffer.from(sealed.tag)},
           response_key_version = ${sealed.keyVersion}::int,
           expires_at = ${answer.expiresAt}::timestamptz
     WHERE scope = ${claim.scope} AND key = ${claim.key}
       AND request_hash = ${claim.requestHash} AND response_status = ${IN_PROGRESS}::int`;
  return updated === 1;
}

/** Deletes a claim still in progress under this request hash; a no-op otherwise. */
export async function releaseClaim(
  db: Db,
  claim: { scope: string; key: string; requestHash: string },
): Promise<void> {
  await db.$executeRaw`
    DELETE FROM idempotency_records
     WHERE scope = ${claim.scope} AND key = ${claim.key}
       AND request_hash = ${claim.requestHash} AND response_status = ${IN_PROGRESS}::int`;
}
