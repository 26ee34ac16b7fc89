/**
 * The usage records' part of the ledger invariant check (run with the others on one snapshot):
 * each record mirrors its final hold (account, status, cost = the settled amount), every final
 * hold has its record (unless purged by retention), and per account and in total the records'
 * costs plus what retention purged equal the settlements posted to the ledger; their refunds
 * equal the refund reversals.
 */
import { Prisma } from '../db/client.js';

export const USAGE_CHECKS: readonly { name: string; sql: Prisma.Sql }[] = [
  {
    name: 'each usage record mirrors its final hold',
    sql: Prisma.sql`
      SELECT 'usage record ' || u.hold_id || ' (account ' || u.account_id || ', '
             || u.hold_status || ', cost ' || u.cost_micro_dzd || ' µDZD) but its hold is '
             || COALESCE(h.status || ' of account ' || h.account_id || ', settled '
                         || COALESCE(h.settled_amount_micro_dzd::text, 'null'), 'missing') AS line
        FROM usage_records u LEFT JOIN holds h ON h.id = u.hold_id
       WHERE h.id IS NULL OR h.status = 'pending' OR h.status::text <> u.hold_status
          OR h.account_id <> u.account_id
          OR u.cost_micro_dzd <> COALESCE(h.settled_amount_micro_dzd, 0)
          OR u.refunded_micro_dzd <> CASE WHEN h.refunded_at IS NULL THEN 0
                                          ELSE COALESCE(h.settled_amount_micro_dzd, 0) END`,
  },
  {
    name: 'every final hold has one usage record',
    sql: Prisma.sql`
      SELECT 'hold ' || h.id || ' (' || h.status || ', ended ' || h.finalized_at
             || ') has no usage record' AS line
        FROM holds h
        LEFT JOIN usage_records u ON u.hold_id = h.id
        LEFT JOIN usage_purged_totals p ON p.account_id = h.account_id
       WHERE h.status <> 'pending' AND u.hold_id IS NULL
         AND (p.account_id IS NULL OR h.finalized_at >= p.purged_before)`,
  },
  {
    name: 'usage costs equal settlements, per account and in total',
    sql: Prisma.sql`
      WITH settled AS (
        SELECT t.account_id, -SUM(e.amount_micro_dzd) AS cost
          FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
         WHERE t.kind = 'hold_settlement' AND e.account_id IS NOT NULL GROUP BY t.account_id
      ), ended AS (
        SELECT account_id, count(*) AS requests FROM holds WHERE status <> 'pending'
         GROUP BY account_id
      ), recorded AS (
        SELECT account_id, count(*) AS requests, SUM(cost_micro_dzd) AS cost
          FROM usage_records GROUP BY account_id
      ), per_account AS (
        SELECT k.account_id,
               COALESCE(s.cost, 0) AS settled, COALESCE(e.requests, 0) AS ended,
               COALESCE(r.cost, 0) + COALESCE(p.cost_micro_dzd, 0) AS usage_cost,
               COALESCE(r.requests, 0) + COALESCE(p.requests, 0) AS usage_requests
          FROM (SELECT account_id FROM settled UNION SELECT account_id FROM ended
                UNION SELECT account_id FROM recorded
                UNION SELECT account_id FROM usage_purged_totals) k
          LEFT JOIN settled s ON s.account_id = k.account_id
          LEFT JOIN ended e ON e.account_id = k.account_id
          LEFT JOIN recorded r ON r.account_id = k.account_id
          LEFT JOIN usage_purged_totals p ON p.account_id = k.account_id
      ), lines AS (
        SELECT 'account ' || account_id AS who, settled, ended, usage_cost, usage_requests
          FROM per_account
        UNION ALL
        SELECT 'all accounts', COALESCE(SUM(settled), 0), COALESCE(SUM(ended), 0),
               COALESCE(SUM(usage_cost), 0), COALESCE(SUM(usage_requests), 0) FROM per_account
      )
      SELECT who || ': usage records (with purged) cost ' || usage_cost || ' µDZD over '
             || usage_requests || ' requests, but settlements charged ' || settled
             || ' µDZD over ' || ended || ' ended holds' AS line
        FROM lines WHERE settled <> usage_cost OR ended <> usage_requests`,
  },
  {
    // Every reversal is a refund of an undelivered answer (the only path that posts one).
    name: 'usage refunds equal refund reversals, per account',
    sql: Prisma.sql`
      WITH reversed AS (
        SELECT t.account_id, SUM(e.amount_micro_dzd) AS refunded
          FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
         WHERE t.kind = 'reversal' AND e.account_id IS NOT NULL GROUP BY t.account_id
      ), recorded AS (
        SELECT account_id, SUM(refunded_micro_dzd) AS refunded FROM usage_records
         GROUP BY account_id
      )
      SELECT 'account ' || k.account_id || ': usage records (with purged) refunded '
             || (COALESCE(r.refunded, 0) + COALESCE(p.refunded_micro_dzd, 0))
             || ' µDZD, but refund reversals gave back ' || COALESCE(v.refunded, 0) || ' µDZD' AS line
        FROM (SELECT account_id FROM reversed UNION SELECT account_id FROM recorded
              UNION SELECT account_id FROM usage_purged_totals) k
        LEFT JOIN reversed v ON v.account_id = k.account_id
        LEFT JOIN recorded r ON r.account_id = k.account_id
        LEFT JOIN usage_purged_totals p ON p.account_id = k.account_id
       WHERE COALESCE(v.refunded, 0)
             <> COALESCE(r.refunded, 0) + COALESCE(p.refunded_micro_dzd, 0)`,
  },
];
