-- Closed periods (finance's month-end close): a month, in a time zone, closed once. The row
-- keeps the report as it stood at the close and a digest of the ledger entries it covered
-- (SHA-256 over each entry's id, transaction, ledger account, amount and time, in id order), so
-- the invariant check can recompute both and report a closed period whose books would now read
-- differently. Rows are never updated or deleted (the runtime role may only insert): a
-- correction after the close is a new entry, which lands in the open period by its time.

CREATE TABLE "ledger_periods" (
    "period" TEXT NOT NULL CHECK ("period" ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
    "time_zone" TEXT NOT NULL,
    "starts_at" TIMESTAMPTZ(3) NOT NULL,
    "ends_at" TIMESTAMPTZ(3) NOT NULL,
    "entries_count" BIGINT NOT NULL CHECK ("entries_count" >= 0),
    "entries_digest" TEXT NOT NULL CHECK ("entries_digest" ~ '^[0-9a-f]{64}$'),
    "report" JSONB NOT NULL,
    "closed_at" TIMESTAMPTZ(3) NOT NULL,
    "closed_by" TEXT NOT NULL,

    CONSTRAINT "ledger_periods_pkey" PRIMARY KEY ("period"),
    CONSTRAINT "ledger_periods_bounds" CHECK ("ends_at" > "starts_at" AND "closed_at" >= "ends_at")
);

-- Finance's BI tools read closed periods too (the finance role's views, finance-grants.ts).
CREATE VIEW "finance_closed_periods" AS
SELECT period, time_zone, starts_at, ends_at, entries_count, entries_digest,
       report -> 'trial_balance' AS trial_balance,
       report -> 'customer_liability' -> 'total' AS customer_liability,
       report -> 'revenue' -> 'total' AS revenue,
       report -> 'checks' AS checks,
       closed_at, closed_by
  FROM ledger_periods;
