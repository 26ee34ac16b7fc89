-- Finance's read-only SQL door: the views a BI tool (Metabase, Excel, psql) may read, and
-- nothing else. The finance role (the migrator's FINANCE_DATABASE_ROLE) is granted SELECT on
-- these views only (src/db/finance-grants.ts): views run with their owner's rights, so the role
-- reads what a view selects and no other column of the tables behind it (no key digests,
-- secrets, idempotency answers, dashboard users). Amounts are µDZD; times are timestamptz.

-- Every ledger entry with its transaction: a trial balance or a roll-forward in any time zone.
CREATE VIEW "finance_entries" AS
SELECT e.id AS entry_id, e.transaction_id, t.kind::text AS kind, e.ledger_account, e.account_id,
       e.amount_micro_dzd, t.hold_id, t.reference, e.created_at
  FROM ledger_entries e
  JOIN ledger_transactions t ON t.id = e.transaction_id;

-- Each customer account's balance now: posted, reserved by open holds, available.
CREATE VIEW "finance_account_balances" AS
SELECT b.account_id, a.name AS account_name, a.status::text AS account_status,
       b.posted_credits_micro_dzd, b.posted_debits_micro_dzd,
       b.posted_credits_micro_dzd - b.posted_debits_micro_dzd AS balance_micro_dzd,
       b.pending_micro_dzd AS reserved_micro_dzd,
       b.posted_credits_micro_dzd - b.posted_debits_micro_dzd - b.pending_micro_dzd
           AS available_micro_dzd,
       b.updated_at
  FROM account_balances b
  JOIN accounts a ON a.id = b.account_id;

-- Revenue per UTC day, model and tier: what settlements credited to system:revenue, and what
-- refunds of answers nobody received gave back (a refund counts on its own day).
CREATE VIEW "finance_daily_revenue" AS
SELECT day_utc, model, priority,
       sum(charged)::bigint AS charged_micro_dzd,
       sum(refunded)::bigint AS refunded_micro_dzd,
       (sum(charged) - sum(refunded))::bigint AS net_revenue_micro_dzd,
       count(*) FILTER (WHERE settlement)::bigint AS settlements,
       count(*) FILTER (WHERE NOT settlement)::bigint AS refunds
  FROM (
    SELECT (t.created_at AT TIME ZONE 'UTC')::date AS day_utc, h.model, h.priority,
           e.amount_micro_dzd AS charged, 0::bigint AS refunded, true AS settlement
      FROM ledger_transactions t
      JOIN holds h ON h.id = t.hold_id
      JOIN ledger_entries e ON e.transaction_id = t.id AND e.ledger_account = 'system:revenue'
     WHERE t.kind = 'hold_settlement'
    UNION ALL
    SELECT (h.refunded_at AT TIME ZONE 'UTC')::date, h.model, h.priority,
           0::bigint, h.settled_amount_micro_dzd, false
      FROM holds h
     WHERE h.refunded_at IS NOT NULL
  ) AS movements
 GROUP BY day_utc, model, priority;

-- Money to or from a customer other than usage: credits, refunds (reversals), adjustments,
-- signed from the customer's side (positive: the customer's balance grew).
CREATE VIEW "finance_credits_and_refunds" AS
SELECT t.id AS transaction_id, t.kind::text AS kind, t.account_id, e.amount_micro_dzd,
       t.reference, t.created_at
  FROM ledger_transactions t
  JOIN ledger_entries e ON e.transaction_id = t.id AND e.ledger_account = 'customer:' || t.account_id
 WHERE t.kind IN ('credit', 'reversal', 'adjustment');
