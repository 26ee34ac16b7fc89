-- Carried-forward balances (issue 35): a closed month keeps every ledger account's balance at its
-- end, written in the close's transaction from the previous close's balances and the month's
-- entries. A report opens from the last close at or before its start and reads only the entries
-- after it, instead of every entry since the ledger began; the invariant check proves each
-- month's balances equal the previous month's plus its entries (the first: all entries before its
-- end). Rows are never updated or deleted (the runtime role may only insert).

CREATE TABLE "ledger_period_balances" (
    "period" TEXT NOT NULL,
    "ledger_account" TEXT NOT NULL,
    "account_id" TEXT,
    "closing_micro_dzd" BIGINT NOT NULL,

    CONSTRAINT "ledger_period_balances_pkey" PRIMARY KEY ("period", "ledger_account"),
    CONSTRAINT "ledger_period_balances_period_fkey" FOREIGN KEY ("period")
        REFERENCES "ledger_periods" ("period") ON DELETE RESTRICT ON UPDATE RESTRICT
);

-- Months closed before this migration get their balances now: every entry before each one's end
-- (closes are rare and few; the check then proves them like any other).
INSERT INTO "ledger_period_balances" ("period", "ledger_account", "account_id", "closing_micro_dzd")
SELECT p."period", e."ledger_account", min(e."account_id"), sum(e."amount_micro_dzd")
  FROM "ledger_periods" p JOIN "ledger_entries" e ON e."created_at" < p."ends_at"
 GROUP BY p."period", e."ledger_account";

-- The indexes below are built inside the migration's transaction, which holds writes to their
-- table while it runs (seconds on a ledger of millions of rows). On a large live ledger, build
-- them first with CREATE INDEX CONCURRENTLY under the same names: IF NOT EXISTS then skips them.

-- A period's entries by time. BRIN: entries are appended in time order, so a block range's
-- minimum and maximum bound it tightly, the index is a few pages for millions of rows, and the
-- hot path's inserts barely touch it (a B-tree would add a leaf insert per entry).
CREATE INDEX IF NOT EXISTS "ledger_entries_created_at_brin_idx" ON "ledger_entries" USING BRIN ("created_at");
-- Their transactions, for the kind of each movement: a transaction and its entries share one
-- time (every write path inserts them with one timestamp; the invariant check proves it).
CREATE INDEX IF NOT EXISTS "ledger_transactions_created_at_brin_idx" ON "ledger_transactions" USING BRIN ("created_at");

-- Holds by their end: the report's settlements (a hold ends when its settlement is written, at
-- the settlement's time), and holds open at a period's end (placed before it, not ended by it:
-- the open ones now and those ended since), instead of every hold ever placed. A settlement changes the indexed `status`
-- already (holds_status_expires_at_idx), so its update was not HOT before this index either.
CREATE INDEX IF NOT EXISTS "holds_finalized_at_idx" ON "holds" ("finalized_at");

-- Refunds by the time they were given (the report's revenue): few holds are ever refunded.
CREATE INDEX IF NOT EXISTS "holds_refunded_at_idx" ON "holds" ("refunded_at") WHERE "refunded_at" IS NOT NULL;
