-- ledger_check_balanced: its live definition. To change it: README.md in this directory.
--
-- Double entry: the entries of a journal transaction sum to zero. Checked at the end of every
-- INSERT statement on ledger_entries, for each journal transaction it touched: insert all legs of
-- a journal transaction with ONE statement (a multi-row INSERT, Prisma's `createMany`).
-- (Not a deferred constraint trigger checked at COMMIT: Prisma 6.19 with @prisma/adapter-pg
-- mishandles an error raised by COMMIT: it reports "Transaction already closed" and leaks the
-- pooled connection.)
--
-- Only the statement's own rows are summed, per transaction: entries are append-only (a trigger
-- refuses UPDATE and DELETE, and no role but the owner may TRUNCATE), so every transaction was
-- balanced before this statement, and stays so exactly when the legs it adds sum to zero.
-- Summing the transaction's rows from the table instead read the ledger back on every posting,
-- with a plan cached per connection: made on a small ledger (a fresh database), it scanned the
-- whole table each time, 2 ms per posting at a few tens of thousands of entries and growing.
CREATE OR REPLACE FUNCTION "ledger_check_balanced"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    unbalanced RECORD;
BEGIN
    SELECT i."transaction_id" AS id, SUM(i."amount_micro_dzd") AS total INTO unbalanced
        FROM inserted i
        GROUP BY i."transaction_id"
        HAVING SUM(i."amount_micro_dzd") <> 0
        LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'ledger transaction % is unbalanced: its entries sum to % µDZD',
            unbalanced.id, unbalanced.total
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$;
