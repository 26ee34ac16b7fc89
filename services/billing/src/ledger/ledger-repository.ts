/**
 * Every query of the ledger domain. Hot paths use raw SQL so that each step is one statement
 * with explicit row locks (READ COMMITTED + `SELECT … FOR UPDATE`), and so that all legs of a
 * journal transaction go into the database in ONE statement (the balanced-entries trigger
 * checks each INSERT statement).
 *
 * Lock order, everywhere: hold row → account_balances row(s) (by account id) → scoped_tokens
 * row(s) (by token id). Following it is what keeps concurrent settles, voids, holds and
 * sweeps free of deadlocks; a caller that wraps placeHold in its own transaction must not
 * lock a scoped_tokens row before the balance row.
 */
import type { SealedValue } from '@gateway/crypto';
import { Prisma } from '../db/client.js';
import type { EntryCursor } from './cursor.js';
import type { Leg } from './ledger-accounts.js';
import type {
  Balance,
  HoldPrices,
  HoldStatus,
  LedgerEntryView,
  LedgerHold,
  TransactionKind,
} from './types.js';

/** A Prisma client or the client of an interactive transaction. */
export type Db = Prisma.TransactionClient;

// ----------------------------------------------------------------------------------- balances

interface BalanceRow {
  credits: bigint;
  debits: bigint;
  pending: bigint;
}

const BALANCE_COLUMNS = Prisma.sql`posted_credits_micro_dzd AS credits,
  posted_debits_micro_dzd AS debits, pending_micro_dzd AS pending`;

export function toBalance(row: BalanceRow): Balance {
  const balance = row.credits - row.debits;
  return {
    postedCreditsMicroDzd: row.credits,
    postedDebitsMicroDzd: row.debits,
    pendingMicroDzd: row.pending,
    balanceMicroDzd: balance,
    availableMicroDzd: balance - row.pending,
  };
}

export const ZERO_BALANCE: Balance = toBalance({ credits: 0n, debits: 0n, pending: 0n });

export async function readBalance(db: Db, accountId: string): Promise<Balance | null> {
  const rows = await db.$queryRaw<BalanceRow[]>`
    SELECT ${BALANCE_COLUMNS} FROM account_balances WHERE account_id = ${accountId}`;
  return rows[0] ? toBalance(rows[0]) : null;
}

/** Locks the account's balance row until the transaction ends; null when it has none. */
export async function lockBalance(db: Db, accountId: string): Promise<Balance | null> {
  const rows = await db.$queryRaw<BalanceRow[]>`
    SELECT ${BALANCE_COLUMNS} FROM account_balances WHERE account_id = ${accountId} FOR UPDATE`;
  return rows[0] ? toBalance(rows[0]) : null;
}

export async function accountExists(db: Db, accountId: string): Promise<boolean> {
  const rows = await db.$queryRaw<unknown[]>`SELECT 1 FROM accounts WHERE id = ${accountId}`;
  return rows.length > 0;
}

/**
 * Adds `amount` to the posted credits, creating the balance row on the account's first credit.
 * Null when the account does not exist.
 */
export async function addPostedCredits(
  db: Db,
  accountId: string,
  amount: bigint,
): Promise<Balance | null> {
  const rows = await db.$queryRaw<BalanceRow[]>`
    INSERT INTO account_balances (account_id, posted_credits_micro_dzd, updated_at)
    SELECT id, ${amount}::bigint, now() FROM accounts WHERE id = ${accountId}
    ON CONFLICT (account_id) DO UPDATE
      SET posted_credits_micro_dzd =
            account_balances.posted_credits_micro_dzd + EXCLUDED.posted_credits_micro_dzd,
          updated_at = now()
    RETURNING ${BALANCE_COLUMNS}`;
  return rows[0] ? toBalance(rows[0]) : null;
}

/** Adds signed deltas to posted debits and pending. Null when the account has no balance row. */
export async function adjustBalance(
  db: Db,
  accountId: string,
  delta: { debits: bigint; pending: bigint },
): Promise<Balance | null> {
  const rows = await db.$queryRaw<BalanceRow[]>`
    UPDATE account_balances
       SET posted_debits_micro_dzd = posted_debits_micro_dzd + ${delta.debits}::bigint,
           pending_micro_dzd = pending_micro_dzd + ${delta.pending}::bigint,
           updated_at = now()
     WHERE account_id = ${accountId}
    RETURNING ${BALANCE_COLUMNS}`;
  return rows[0] ? toBalance(rows[0]) : null;
}

// ------------------------------------------------------------------------------ scoped tokens

export interface TokenCounters {
  id: string;
  accountId: string;
  spendingLimitMicroDzd: bigint | null;
  spentMicroDzd: bigint;
  reservedMicroDzd: bigint;
}

export async function lockScopedToken(db: Db, tokenId: string): Promise<TokenCounters | null> {
  const rows = await db.$queryRaw<TokenCounters[]>`
    SELECT id, account_id AS "accountId", spending_limit_micro_dzd AS "spendingLimitMicroDzd",
           spent_micro_dzd AS "spentMicroDzd", reserved_micro_dzd AS "reservedMicroDzd"
      FROM scoped_tokens WHERE id = ${tokenId} FOR UPDATE`;
  return rows[0] ?? null;
}

export async function adjustScopedToken(
  db: Db,
  tokenId: string,
  delta: { spent: bigint; reserved: bigint },
): Promise<void> {
  await db.$executeRaw`
    UPDATE scoped_tokens
       SET spent_micro_dzd = spent_micro_dzd + ${delta.spent}::bigint,
           reserved_micro_dzd = reserved_micro_dzd + ${delta.reserved}::bigint
     WHERE id = ${tokenId}`;
}

// -------------------------------------------------------------------------------------- holds

interface HoldRow {
  id: string;
  account_id: string;
  scoped_token_id: string | null;
  amount_micro_dzd: bigint;
  status: HoldStatus;
  settled_amount_micro_dzd: bigint | null;
  model: string;
  priority: boolean;
  expires_at: Date;
  created_at: Date;
  finalized_at: Date | null;
}

const HOLD_COLUMNS = Prisma.sql`h.id, h.account_id, h.scoped_token_id, h.amount_micro_dzd,
  h.status::text AS status, h.settled_amount_micro_dzd, h.model, h.priority, h.expires_at,
  h.created_at, h.finalized_at`;

function toHold(row: HoldRow): LedgerHold {
  return {
    id: row.id,
    accountId: row.account_id,
    scopedTokenId: row.scoped_token_id,
    amountMicroDzd: row.amount_micro_dzd,
    status: row.status,
    settledAmountMicroDzd: row.settled_amount_micro_dzd,
    model: row.model,
    priority: row.priority,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    finalizedAt: row.finalized_at,
  };
}

export async function findHold(db: Db, holdId: string): Promise<LedgerHold | null> {
  const rows = await db.$queryRaw<HoldRow[]>`
    SELECT ${HOLD_COLUMNS} FROM holds h WHERE h.id = ${holdId}`;
  return rows[0] ? toHold(rows[0]) : null;
}

export interface HoldWithPrices {
  hold: LedgerHold;
  /**
   * The prices the hold was admitted at; for a hold placed before prices were snapshotted, the
   * catalog's current prices. Null when neither exists (such a hold cannot be priced).
   */
  prices: HoldPrices | null;
}

/** Locks the hold row (first in the lock order) with the prices it settles at. */
export async function lockHold(db: Db, holdId: string): Promise<HoldWithPrices | null> {
  const rows = await db.$queryRaw<
    (HoldRow & { input_price: bigint | null; output_price: bigint | null })[]
  >`
    SELECT ${HOLD_COLUMNS},
           COALESCE(h.input_price_micro_dzd_per_m, m.input_price_micro_dzd_per_m) AS input_price,
           COALESCE(h.output_price_micro_dzd_per_m, m.output_price_micro_dzd_per_m) AS output_price
      FROM holds h LEFT JOIN models m ON m.id = h.model
     WHERE h.id = ${holdId}
       FOR UPDATE OF h`;
  const row = rows[0];
  if (!row) return null;
  const prices =
    row.input_price === null || row.output_price === null
      ? null
      : { inputMicroDzdPerM: row.input_price, outputMicroDzdPerM: row.output_price };
  return { hold: toHold(row), prices };
}

/** A model's current catalog prices, or null when it is not in the catalog. */
export async function catalogPrices(db: Db, model: string): Promise<HoldPrices | null> {
  const rows = await db.$queryRaw<{ input_price: bigint; output_price: bigint }[]>`
    SELECT input_price_micro_dzd_per_m AS input_price, output_price_micro_dzd_per_m AS output_price
      FROM models WHERE id = ${model}`;
  const row = rows[0];
  return row ? { inputMicroDzdPerM: row.input_price, outputMicroDzdPerM: row.output_price } : null;
}

export interface NewHold {
  id: string;
  accountId: string;
  scopedTokenId: string | null;
  amountMicroDzd: bigint;
  model: string;
  /** Snapshot of the model's prices the amount was computed with. */
  prices: HoldPrices | null;
  priority: boolean;
  expiresAt: Date;
  createdAt: Date;
}

/**
 * Inserts a pending hold and reserves its amount on the balance (and token) in one statement.
 * The caller holds the balance (and token) row locks already. Null when a hold with this id
 * exists: nothing is reserved then.
 */
export async function insertHoldAndReserve(db: Db, hold: NewHold): Promise<LedgerHold | null> {
  const rows = await db.$queryRaw<(HoldRow & { balances: bigint })[]>`
    WITH h AS (
      INSERT INTO holds (id, account_id, scoped_token_id, amount_micro_dzd, status, model,
                         input_price_micro_dzd_per_m, output_price_micro_dzd_per_m,
                         priority, expires_at, created_at)
      VALUES (${hold.id}, ${hold.accountId}, ${hold.scopedTokenId}::text,
              ${hold.amountMicroDzd}::bigint, 'pending', ${hold.model},
              ${hold.prices?.inputMicroDzdPerM ?? null}::bigint,
              ${hold.prices?.outputMicroDzdPerM ?? null}::bigint, ${hold.priority}::boolean,
              ${hold.expiresAt}::timestamptz, ${hold.createdAt}::timestamptz)
      ON CONFLICT (id) DO NOTHING
      RETURNING *
    ), b AS (
      UPDATE account_balances
         SET pending_micro_dzd = account_balances.pending_micro_dzd + h.amount_micro_dzd,
             updated_at = now()
        FROM h WHERE account_balances.account_id = h.account_id
      RETURNING account_balances.account_id
    ), t AS (
      UPDATE scoped_tokens
         SET reserved_micro_dzd = scoped_tokens.reserved_micro_dzd + h.amount_micro_dzd
        FROM h WHERE scoped_tokens.id = h.scoped_token_id
      RETURNING scoped_tokens.id
    )
    SELECT ${HOLD_COLUMNS}, (SELECT count(*) FROM b) AS balances FROM h`;
  const row = rows[0];
  if (!row) return null;
  if (Number(row.balances) !== 1) throw new Error(`hold ${hold.id}: no balance row to reserve on`);
  return toHold(row);
}

export async function finalizeHold(
  db: Db,
  holdId: string,
  status: Exclude<HoldStatus, 'pending'>,
  settledAmount: bigint | null,
  at: Date,
): Promise<void> {
  const updated = await db.$executeRaw`
    UPDATE holds
       SET status = ${status}::"HoldStatus",
           settled_amount_micro_dzd = ${settledAmount}::bigint,
           finalized_at = ${at}::timestamptz
     WHERE id = ${holdId} AND status = 'pending'`;
  if (updated !== 1) throw new Error(`hold ${holdId} was not pending`);
}

// ------------------------------------------------------------------------------------ journal

export interface NewJournalTransaction {
  id: string;
  kind: TransactionKind;
  accountId: string;
  reference: string | null;
  holdId: string | null;
  createdAt: Date;
  legs: readonly Leg[];
}

/** The transaction row and ALL its legs in ONE statement (the trigger checks per statement). */
export async function insertJournalTransaction(db: Db, txn: NewJournalTransaction): Promise<void> {
  const ledgerAccounts = txn.legs.map((leg) => leg.ledgerAccount);
  const accountIds = txn.legs.map((leg) => leg.accountId);
  const amounts = txn.legs.map((leg) => leg.amountMicroDzd.toString());
  await db.$executeRaw`
    WITH t AS (
      INSERT INTO ledger_transactions (id, kind, account_id, reference, hold_id, created_at)
      VALUES (${txn.id}, ${txn.kind}::"TransactionKind", ${txn.accountId}, ${txn.reference}::text,
              ${txn.holdId}::text, ${txn.createdAt}::timestamptz)
      RETURNING id
    )
    INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd,
                                created_at)
    SELECT t.id, l.ledger_account, l.account_id, l.amount, ${txn.createdAt}::timestamptz
      FROM t CROSS JOIN unnest(${ledgerAccounts}::text[], ${accountIds}::text[],
                               ${amounts}::bigint[]) AS l(ledger_account, account_id, amount)`;
}

export interface Settlement {
  holdId: string;
  accountId: string;
  heldMicroDzd: bigint;
  costMicroDzd: bigint;
  transactionId: string;
  reference: string;
  at: Date;
  legs: readonly Leg[];
}

/**
 * Settles a pending hold whose row the caller has locked, in ONE statement: posts the debit and
 * releases the held amount on the balance (the only new lock taken), marks the hold settled,
 * and writes the settlement transaction with all its legs. Null when the account has no
 * balance row (never for a hold placed by the ledger).
 */
export async function settleLockedHold(db: Db, s: Settlement): Promise<Balance | null> {
  const ledgerAccounts = s.legs.map((leg) => leg.ledgerAccount);
  const accountIds = s.legs.map((leg) => leg.accountId);
  const amounts = s.legs.map((leg) => leg.amountMicroDzd.toString());
  const rows = await db.$queryRaw<(BalanceRow & { holds: bigint; transactions: bigint })[]>`
    WITH b AS (
      UPDATE account_balances
         SET posted_debits_micro_dzd = posted_debits_micro_dzd + ${s.costMicroDzd}::bigint,
             pending_micro_dzd = pending_micro_dzd - ${s.heldMicroDzd}::bigint,
             updated_at = now()
       WHERE account_id = ${s.accountId}
      RETURNING ${BALANCE_COLUMNS}
    ), h AS (
      UPDATE holds
         SET status = 'settled', settled_amount_micro_dzd = ${s.costMicroDzd}::bigint,
             finalized_at = ${s.at}::timestamptz
       WHERE id = ${s.holdId} AND status = 'pending' AND EXISTS (SELECT 1 FROM b)
      RETURNING id
    ), t AS (
      INSERT INTO ledger_transactions (id, kind, account_id, reference, hold_id, created_at)
      SELECT ${s.transactionId}, 'hold_settlement', ${s.accountId}, ${s.reference}, h.id,
             ${s.at}::timestamptz
        FROM h
      RETURNING id
    ), e AS (
      INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd,
                                  created_at)
      SELECT t.id, l.ledger_account, l.account_id, l.amount, ${s.at}::timestamptz
        FROM t CROSS JOIN unnest(${ledgerAccounts}::text[], ${accountIds}::text[],
                                 ${amounts}::bigint[]) AS l(ledger_account, account_id, amount)
      RETURNING 1
    )
    SELECT b.credits, b.debits, b.pending, (SELECT count(*) FROM h) AS holds,
           (SELECT count(*) FROM t) AS transactions
      FROM b`;
  const row = rows[0];
  if (!row) return null;
  if (Number(row.holds) !== 1 || Number(row.transactions) !== 1) {
    throw new Error(`hold ${s.holdId} was not pending under its lock`);
  }
  return toBalance(row);
}

export async function findSettlementTransactionId(db: Db, holdId: string): Promise<string | null> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT id FROM ledger_transactions WHERE hold_id = ${holdId}`;
  return rows[0]?.id ?? null;
}

// -------------------------------------------------------------------------------- idempotency

export interface IdempotencyClaim {
  scope: string;
  key: string;
  requestHash: string;
  now: Date;
  expiresAt: Date;
}

/**
 * Claims (scope, key) for this transaction: true when this caller owns it (new key, or the
 * previous record had expired). The primary key is the arbiter: a concurrent claimer blocks
 * on the INSERT until the owner commits (then it does not own the key) or rolls back (then it
 * does).
 */
export async function claimIdempotencyKey(db: Db, claim: IdempotencyClaim): Promise<boolean> {
  const rows = await db.$queryRaw<unknown[]>`
    INSERT INTO idempotency_records (scope, key, request_hash, response_status, response_body,
                                     created_at, expires_at)
    VALUES (${claim.scope}, ${claim.key}, ${claim.requestHash}, 0, '{}'::jsonb,
            ${claim.now}::timestamptz, ${claim.expiresAt}::timestamptz)
    ON CONFLICT (scope, key) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, response_status = 0, response_body = '{}'::jsonb,
          response_ciphertext = NULL, response_nonce = NULL, response_tag = NULL,
          response_key_version = NULL,
          created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
      WHERE idempotency_records.expires_at <= ${claim.now}::timestamptz
    RETURNING 1`;
  return rows.length === 1;
}

export interface StoredResponse {
  requestHash: string;
  responseStatus: number;
  responseBody: unknown;
  /** The answer sealed with MASTER_KEY (edge requests); null where `responseBody` holds it. */
  sealed: SealedValue | null;
}

interface StoredRow extends Omit<StoredResponse, 'sealed'> {
  ciphertext: Uint8Array | null;
  nonce: Uint8Array | null;
  tag: Uint8Array | null;
  keyVersion: number | null;
}

export async function readIdempotencyRecord(
  db: Db,
  scope: string,
  key: string,
): Promise<StoredResponse | null> {
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
 * (a claim takes it over), so deleting it changes no answer.
 */
export async function purgeIdempotencyRecords(db: Db, now: Date, limit: number): Promise<number> {
  return db.$executeRaw`
    DELETE FROM idempotency_records
     WHERE ctid = ANY(ARRAY(SELECT ctid FROM idempotency_records
                             WHERE expires_at <= ${now}::timestamptz
                             LIMIT ${limit}::int))`;
}

// ------------------------------------------------------------------------------------ sweeper

export interface ExpiredHold {
  id: string;
  accountId: string;
  scopedTokenId: string | null;
  amountMicroDzd: bigint;
}

/**
 * Locks up to `limit` pending holds past their expiry. SKIP LOCKED: holds another replica's
 * sweeper (or a settle/void in flight) has locked are left to it.
 */
export async function lockExpiredHolds(db: Db, now: Date, limit: number): Promise<ExpiredHold[]> {
  return db.$queryRaw<ExpiredHold[]>`
    SELECT id, account_id AS "accountId", scoped_token_id AS "scopedTokenId",
           amount_micro_dzd AS "amountMicroDzd"
      FROM holds
     WHERE status = 'pending' AND expires_at <= ${now}::timestamptz
     ORDER BY expires_at, id
     LIMIT ${limit}::int
       FOR UPDATE SKIP LOCKED`;
}

/** Releases pending amounts per account: locks the rows in account-id order, then updates. */
export async function releasePending(db: Db, amounts: ReadonlyMap<string, bigint>): Promise<void> {
  const ids = [...amounts.keys()].sort();
  if (ids.length === 0) return;
  await db.$queryRaw`
    SELECT 1 FROM account_balances WHERE account_id = ANY(${ids}::text[])
     ORDER BY account_id FOR UPDATE`;
  const values = ids.map((id) => amounts.get(id)!.toString());
  await db.$executeRaw`
    UPDATE account_balances b
       SET pending_micro_dzd = b.pending_micro_dzd - v.amount, updated_at = now()
      FROM unnest(${ids}::text[], ${values}::bigint[]) AS v(account_id, amount)
     WHERE b.account_id = v.account_id`;
}

/** Releases reserved amounts per scoped token, locking in token-id order. */
export async function releaseReserved(db: Db, amounts: ReadonlyMap<string, bigint>): Promise<void> {
  const ids = [...amounts.keys()].sort();
  if (ids.length === 0) return;
  await db.$queryRaw`
    SELECT 1 FROM scoped_tokens WHERE id = ANY(${ids}::text[]) ORDER BY id FOR UPDATE`;
  const values = ids.map((id) => amounts.get(id)!.toString());
  await db.$executeRaw`
    UPDATE scoped_tokens s
       SET reserved_micro_dzd = s.reserved_micro_dzd - v.amount
      FROM unnest(${ids}::text[], ${values}::bigint[]) AS v(id, amount)
     WHERE s.id = v.id`;
}

export async function markHoldsExpired(db: Db, ids: readonly string[], at: Date): Promise<number> {
  return db.$executeRaw`
    UPDATE holds SET status = 'expired', finalized_at = ${at}::timestamptz
     WHERE id = ANY(${[...ids]}::text[]) AND status = 'pending'`;
}

// ------------------------------------------------------------------------------------ finance

interface EntryRow {
  id: bigint;
  transaction_id: string;
  kind: TransactionKind;
  ledger_account: string;
  account_id: string | null;
  amount_micro_dzd: bigint;
  reference: string | null;
  hold_id: string | null;
  created_at: Date;
}

function toEntry(row: EntryRow): LedgerEntryView {
  return {
    id: row.id,
    transactionId: row.transaction_id,
    kind: row.kind,
    ledgerAccount: row.ledger_account,
    accountId: row.account_id,
    amountMicroDzd: row.amount_micro_dzd,
    reference: row.reference,
    holdId: row.hold_id,
    createdAt: row.created_at,
  };
}

export interface EntryFilter {
  accountId?: string;
  ledgerAccount?: string;
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to: Date;
  after?: EntryCursor;
  limit: number;
}

/** Entries in (created_at, id) order. */
export async function selectEntries(db: Db, filter: EntryFilter): Promise<LedgerEntryView[]> {
  const conditions = [Prisma.sql`e.created_at < ${filter.to}::timestamptz`];
  if (filter.from) conditions.push(Prisma.sql`e.created_at >= ${filter.from}::timestamptz`);
  if (filter.accountId !== undefined) {
    conditions.push(Prisma.sql`e.account_id = ${filter.accountId}`);
  }
  if (filter.ledgerAccount !== undefined) {
    conditions.push(Prisma.sql`e.ledger_account = ${filter.ledgerAccount}`);
  }
  if (filter.after) {
    conditions.push(
      Prisma.sql`(e.created_at, e.id) > (${filter.after.createdAt}::timestamptz,
                                          ${filter.after.id.toString()}::bigint)`,
    );
  }
  const rows = await db.$queryRaw<EntryRow[]>`
    SELECT e.id, e.transaction_id, t.kind::text AS kind, e.ledger_account, e.account_id,
           e.amount_micro_dzd, t.reference, t.hold_id, e.created_at
      FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
     WHERE ${Prisma.join(conditions, ' AND ')}
     ORDER BY e.created_at, e.id
     LIMIT ${filter.limit}::int`;
  return rows.map(toEntry);
}

/** Posted balance of `customer:<accountId>` before `before` (exclusive). */
export async function postedBalanceBefore(
  db: Db,
  accountId: string,
  before: Date,
): Promise<bigint> {
  const rows = await db.$queryRaw<{ total: bigint | null }[]>`
    SELECT SUM(amount_micro_dzd)::bigint AS total FROM ledger_entries
     WHERE account_id = ${accountId} AND created_at < ${before}::timestamptz`;
  return rows[0]?.total ?? 0n;
}
