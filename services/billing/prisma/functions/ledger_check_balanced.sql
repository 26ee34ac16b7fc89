-- ledger_check_balanced: its live definition. To change it: README.md in this directory.
--
-- Double entry: the entries of a journal transaction sum to zero. Checked at the end of every
-- INSERT statement on ledger_entries, for each journal transaction it touched: insert all legs of
-- a journal transaction with ONE statement (a multi-row INSERT, Prisma's `createMany`).
-- (Not a deferred constraint trigger checked at COMMIT: Prisma 6.19 with @prisma/adapter-pg
-- mishandles an error raised by COMMIT: it reports "Transaction already closed" and leaks the
-- pooled connection.)
CREATE OR REPLACE FUNCTION "ledger_check_balanced"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    unbalanced RECORD;
BEGIN
    SELECT e."transaction_id" AS id, SUM(e."amount_micro_dzd") AS total INTO unbalanced
        FROM "ledger_entries" e
        WHERE e."transaction_id" IN (SELECT "transaction_id" FROM inserted)
        GROUP BY e."transaction_id"
        HAVING SUM(e."amount_micro_dzd") <> 0
        LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'ledger transaction % is unbalanced: its entries sum to % µDZD',
            unbalanced.id, unbalanced.total
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$;
