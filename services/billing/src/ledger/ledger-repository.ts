/**
 * The ledger's queries through Prisma (raw SQL on the ORM's connection): credits, the sweeper
 * and the finance exports (holds are placed by admission's SQL function, admission/admission.ts). Settle, void and
 * getHold do not come here: they are one prepared statement each (pg-hot-path.ts). Each step
 * is one statement with explicit row locks (READ COMMITTED + `SELECT … FOR UPDATE`), and all
 * legs of a journal transaction go into the database in ONE statement (the balanced-entries
 * trigger checks each INSERT statement). Lock order: store.ts.
 */
import { Prisma } from '../db/client.js';
import type { EntryFilter, ExpiredHold, NewJournalTransaction } from './store.js';
import type { Balance, LedgerEntryView, OpenHoldRecord, TransactionKind } from './types.js';

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

// ------------------------------------------------------------------------------------ journal

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

// ------------------------------------------------------------------------------------ sweeper

/**
 * Locks up to `limit` pending holds past their expiry, or never published and placed at or
 * before `unpublishedBefore`. SKIP LOCKED: holds another replica's sweeper (or a settle, void or
 * publish mark in flight) has locked are left to it; a row published meanwhile is re-checked by
 * PostgreSQL after the lock and no longer matches.
 */
export async function lockExpiredHolds(
  db: Db,
  now: Date,
  limit: number,
  unpublishedBefore: Date,
): Promise<ExpiredHold[]> {
  return db.$queryRaw<ExpiredHold[]>`
    SELECT id, account_id AS "accountId", scoped_token_id AS "scopedTokenId",
           amount_micro_dzd AS "amountMicroDzd"
      FROM holds
     WHERE status = 'pending'
       AND (expires_at <= ${now}::timestamptz
            OR (published_at IS NULL AND created_at <= ${unpublishedBefore}::timestamptz))
     ORDER BY expires_at, id
     LIMIT ${limit}::int
       FOR UPDATE SKIP LOCKED`;
}

/** The account's pending holds, oldest first, at most `limit` (the index on account, status). */
export function selectOpenHolds(
  db: Db,
  accountId: string,
  limit: number,
): Promise<OpenHoldRecord[]> {
  return db.$queryRaw<OpenHoldRecord[]>`
    SELECT id, model, amount_micro_dzd AS "amountMicroDzd", priority,
           scoped_token_id AS "scopedTokenId", published_at AS "publishedAt",
           created_at AS "createdAt", expires_at AS "expiresAt"
      FROM holds
     WHERE account_id = ${accountId} AND status = 'pending'
     ORDER BY created_at, id
     LIMIT ${limit}::int`;
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

/**
 * Marks locked holds expired. One still before its expiry at `now` was released by the publish
 * grace (no mark came), which is a guess: its settlement is still charged (ledger_settle_holds).
 */
export async function markHoldsExpired(
  db: Db,
  ids: readonly string[],
  at: Date,
  now: Date,
): Promise<number> {
  return db.$executeRaw`
    UPDATE holds SET status = 'expired', finalized_at = ${at}::timestamptz,
                     released_unpublished = expires_at > ${now}::timestamptz
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

// --- metrics (read when scraped: metrics.ts) ---

/** Pending holds, all accounts. */
export async function countPendingHolds(db: Db): Promise<number> {
  const rows = await db.$queryRaw<{ open: number }[]>`
    SELECT count(*)::int AS open FROM holds WHERE status = 'pending'`;
  return rows[0]?.open ?? 0;
}

/** Holds settled capped at their amount (through the partial index `holds_capped_idx`). */
export async function countCappedHolds(db: Db): Promise<number> {
  const rows = await db.$queryRaw<{ capped: number }[]>`
    SELECT count(*)::int AS capped FROM holds WHERE uncapped_cost_micro_dzd IS NOT NULL`;
  return rows[0]?.capped ?? 0;
}

/** Seconds the most overdue pending hold has been past its expiry (0 when none is). */
export async function sweeperLagSeconds(db: Db): Promise<number> {
  const rows = await db.$queryRaw<{ lag: number }[]>`
    SELECT COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(expires_at)), 0)::float8 AS lag
    FROM holds WHERE status = 'pending' AND expires_at < clock_timestamp()`;
  return Math.max(0, rows[0]?.lag ?? 0);
}
