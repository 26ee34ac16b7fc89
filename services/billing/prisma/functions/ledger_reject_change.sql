-- ledger_reject_change: its live definition. To change it: README.md in this directory.
--
-- The ledger is append-only: rows are never updated or deleted; corrections are new
-- (reversing) transactions. Rejects UPDATE/DELETE row by row and TRUNCATE.
CREATE OR REPLACE FUNCTION "ledger_reject_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger is append-only: % on % is not allowed', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END;
$$;
