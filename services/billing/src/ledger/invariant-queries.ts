/**
 * The ledger's invariants as SQL: each query returns one human-readable line per violation.
 * Run them all inside one REPEATABLE READ READ ONLY transaction, so they see one snapshot even
 * while traffic flows (a read-only transaction never fails at COMMIT).
 */
import { Prisma } from '../db/client.js';
import { USAGE_CHECKS } from '../usage/usage-checks.js';
import type { Db } from './ledger-repository.js';

/** At most this many lines per check (the report says when there were more). */
export const MAX_VIOLATIONS_PER_CHECK = 50;

interface Check {
  name: string;
  sql: Prisma.Sql;
}

const CHECKS: readonly Check[] = [
  {
    name: 'journal transactions sum to zero',
    sql: Prisma.sql`
      SELECT 'transaction ' || transaction_id || ': entries sum to '
             || SUM(amount_micro_dzd) || ' µDZD, not 0' AS line
        FROM ledger_entries GROUP BY transaction_id HAVING SUM(amount_micro_dzd) <> 0`,
  },
  {
    name: 'only known ledger accounts; customer legs carry their account id',
    sql: Prisma.sql`
      SELECT 'entry ' || e.id || ' of transaction ' || e.transaction_id || ': ledger account '
             || e.ledger_account || ' with account id ' || COALESCE(e.account_id, 'none')
             || ' (transaction account ' || t.account_id || ')' AS line
        FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
       WHERE NOT (
               (e.ledger_account IN ('system:funding', 'system:revenue') AND e.account_id IS NULL)
            OR (e.account_id IS NOT NULL AND e.ledger_account = 'customer:' || e.account_id
                AND e.account_id = t.account_id))`,
  },
  {
    // Reports read each table for their period by these times (src/reports).
    name: "every entry at its transaction's time; a settlement at its hold's end",
    sql: Prisma.sql`
      SELECT 'entry ' || e.id || ' of transaction ' || e.transaction_id || ' at '
             || e.created_at || ', its transaction at ' || t.created_at AS line
        FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
       WHERE e.created_at <> t.created_at
      UNION ALL
      SELECT 'hold ' || h.id || ' ended at ' || COALESCE(h.finalized_at::text, 'no time')
             || ', its settlement ' || t.id || ' at ' || t.created_at
        FROM ledger_transactions t JOIN holds h ON h.id = t.hold_id
       WHERE t.kind = 'hold_settlement' AND h.finalized_at IS DISTINCT FROM t.created_at`,
  },
  {
    name: 'only settlements of zero cost have no entries',
    sql: Prisma.sql`
      SELECT 'transaction ' || t.id || ' (' || t.kind || ') has no entries' AS line
        FROM ledger_transactions t
       WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.transaction_id = t.id)
         AND NOT (t.kind = 'hold_settlement' AND EXISTS (
               SELECT 1 FROM holds h WHERE h.id = t.hold_id AND h.settled_amount_micro_dzd = 0))`,
  },
  {
    name: 'balance projections equal their entries and pending holds',
    sql: Prisma.sql`
      WITH entries AS (
        SELECT account_id,
               COALESCE(SUM(amount_micro_dzd) FILTER (WHERE amount_micro_dzd > 0), 0) AS credits,
               COALESCE(-SUM(amount_micro_dzd) FILTER (WHERE amount_micro_dzd < 0), 0) AS debits
          FROM ledger_entries WHERE account_id IS NOT NULL GROUP BY account_id
      ), pending AS (
        SELECT account_id, SUM(amount_micro_dzd) AS pending
          FROM holds WHERE status = 'pending' GROUP BY account_id
      ), keys AS (
        SELECT account_id FROM account_balances
        UNION SELECT account_id FROM entries
        UNION SELECT account_id FROM pending
      )
      SELECT 'account ' || k.account_id || ': projection '
             || COALESCE('credits ' || b.posted_credits_micro_dzd || ', debits '
                         || b.posted_debits_micro_dzd || ', pending ' || b.pending_micro_dzd,
                         'missing')
             || ' but entries give credits ' || COALESCE(e.credits, 0) || ', debits '
             || COALESCE(e.debits, 0) || ' and pending holds ' || COALESCE(p.pending, 0) AS line
        FROM keys k
        LEFT JOIN account_balances b ON b.account_id = k.account_id
        LEFT JOIN entries e ON e.account_id = k.account_id
        LEFT JOIN pending p ON p.account_id = k.account_id
       WHERE b.account_id IS NULL
          OR b.posted_credits_micro_dzd <> COALESCE(e.credits, 0)
          OR b.posted_debits_micro_dzd <> COALESCE(e.debits, 0)
          OR b.pending_micro_dzd <> COALESCE(p.pending, 0)`,
  },
  {
    name: 'no available balance below zero',
    sql: Prisma.sql`
      SELECT 'account ' || account_id || ': available balance '
             || (posted_credits_micro_dzd - posted_debits_micro_dzd - pending_micro_dzd)
             || ' µDZD is below zero' AS line
        FROM account_balances
       WHERE posted_credits_micro_dzd - posted_debits_micro_dzd - pending_micro_dzd < 0
          OR posted_credits_micro_dzd < 0 OR posted_debits_micro_dzd < 0 OR pending_micro_dzd < 0`,
  },
  {
    name: 'every hold in exactly one consistent state',
    sql: Prisma.sql`
      SELECT 'hold ' || id || ': status ' || status || ', amount ' || amount_micro_dzd
             || ', settled ' || COALESCE(settled_amount_micro_dzd::text, 'null')
             || ', finalized ' || COALESCE(finalized_at::text, 'null') AS line
        FROM holds
       WHERE amount_micro_dzd < 0
          OR (status = 'settled') <> (settled_amount_micro_dzd IS NOT NULL)
          OR settled_amount_micro_dzd < 0 OR settled_amount_micro_dzd > amount_micro_dzd
          OR (status = 'pending') <> (finalized_at IS NULL)
          OR (refunded_at IS NOT NULL AND status <> 'settled')`,
  },
  {
    name: 'a settlement transaction iff the hold is settled, for the settled amount',
    sql: Prisma.sql`
      WITH settlements AS (
        SELECT t.id, t.hold_id, t.kind, t.account_id,
               COALESCE((SELECT -SUM(e.amount_micro_dzd) FROM ledger_entries e
                          WHERE e.transaction_id = t.id AND e.account_id IS NOT NULL), 0) AS charged
          FROM ledger_transactions t WHERE t.hold_id IS NOT NULL
      )
      SELECT CASE
               WHEN h.id IS NULL THEN 'transaction ' || s.id || ' settles unknown hold ' || s.hold_id
               WHEN s.id IS NULL THEN 'hold ' || h.id || ' is settled without a settlement transaction'
               WHEN h.status <> 'settled' THEN 'hold ' || h.id || ' is ' || h.status
                    || ' but has settlement transaction ' || s.id
               ELSE 'hold ' || h.id || ': settlement transaction ' || s.id || ' (' || s.kind
                    || ', account ' || s.account_id || ') charges ' || s.charged
                    || ' µDZD but the hold settled ' || h.settled_amount_micro_dzd
             END AS line
        FROM holds h FULL JOIN settlements s ON s.hold_id = h.id
       WHERE (h.id IS NULL)
          OR (s.id IS NULL AND h.status = 'settled')
          OR (s.id IS NOT NULL AND h.status <> 'settled')
          OR (s.id IS NOT NULL AND (s.kind <> 'hold_settlement' OR s.account_id <> h.account_id
                                    OR s.charged <> h.settled_amount_micro_dzd))`,
  },
  {
    name: 'scoped-token counters equal their holds',
    sql: Prisma.sql`
      WITH sums AS (
        SELECT scoped_token_id AS id,
               COALESCE(SUM(amount_micro_dzd) FILTER (WHERE status = 'pending'), 0) AS reserved,
               COALESCE(SUM(settled_amount_micro_dzd)
                          FILTER (WHERE status = 'settled' AND refunded_at IS NULL), 0) AS spent
          FROM holds WHERE scoped_token_id IS NOT NULL GROUP BY scoped_token_id
      )
      SELECT 'scoped token ' || COALESCE(s.id, x.id) || ': '
             || COALESCE('reserved ' || s.reserved_micro_dzd || ', spent ' || s.spent_micro_dzd,
                         'not registered')
             || ' but its holds give reserved ' || COALESCE(x.reserved, 0) || ', spent '
             || COALESCE(x.spent, 0) AS line
        FROM scoped_tokens s FULL JOIN sums x ON x.id = s.id
       WHERE s.id IS NULL
          OR s.reserved_micro_dzd <> COALESCE(x.reserved, 0)
          OR s.spent_micro_dzd <> COALESCE(x.spent, 0)`,
  },
  {
    // Budgets: what admission reserved and the trigger released and counted, recomputed from
    // the holds: pending ones reserve; settled, unrefunded ones admitted in the current window
    // are spent. (A window admission has not rolled yet still shows its old spend: the same as
    // the row.)
    name: 'budget counters equal their holds',
    sql: Prisma.sql`
      WITH budgeted AS (
        SELECT key_budget_id AS budget_id, status, amount_micro_dzd, settled_amount_micro_dzd,
               refunded_at, created_at
          FROM holds WHERE key_budget_id IS NOT NULL
        UNION ALL
        SELECT token_budget_id, status, amount_micro_dzd, settled_amount_micro_dzd, refunded_at,
               created_at
          FROM holds WHERE token_budget_id IS NOT NULL
      ), sums AS (
        SELECT b.id,
               COALESCE(SUM(h.amount_micro_dzd) FILTER (WHERE h.status = 'pending'), 0) AS reserved,
               COALESCE(SUM(h.settled_amount_micro_dzd)
                          FILTER (WHERE h.status = 'settled' AND h.refunded_at IS NULL
                                    AND h.created_at >= b.window_start), 0) AS spent
          FROM budgets b LEFT JOIN budgeted h ON h.budget_id = b.id
         GROUP BY b.id
      )
      SELECT 'budget ' || b.id || ': reserved ' || b.reserved_micro_dzd || ', spent '
             || b.spent_micro_dzd || ' but its holds give reserved ' || x.reserved || ', spent '
             || x.spent AS line
        FROM budgets b JOIN sums x ON x.id = b.id
       WHERE b.reserved_micro_dzd <> x.reserved OR b.spent_micro_dzd <> x.spent`,
  },
];

export async function collectViolations(db: Db): Promise<string[]> {
  const violations: string[] = [];
  for (const check of [...CHECKS, ...USAGE_CHECKS]) {
    const rows = await db.$queryRaw<{ line: string }[]>`
      SELECT line FROM (${check.sql}) AS v LIMIT ${MAX_VIOLATIONS_PER_CHECK + 1}::int`;
    for (const row of rows.slice(0, MAX_VIOLATIONS_PER_CHECK)) {
      violations.push(`${check.name}: ${row.line}`);
    }
    if (rows.length > MAX_VIOLATIONS_PER_CHECK) {
      violations.push(`${check.name}: more violations omitted`);
    }
  }
  return violations;
}
