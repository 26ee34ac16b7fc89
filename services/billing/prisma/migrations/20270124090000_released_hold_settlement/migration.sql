-- A hold the sweeper released because its publish mark came after the grace may still have run:
-- its settlement is charged what the account covers (docs/adr/0062-settling-a-released-hold.md).
-- The sweeper records which holds it released by the grace, before their expiry: only those are
-- a guess (a hold expired at its TTL is not). Existing expired holds stay false (refused, as
-- before). A constant default: PostgreSQL adds the column without rewriting the table.
ALTER TABLE "holds" ADD COLUMN "released_unpublished" BOOLEAN NOT NULL DEFAULT false;

-- The cap is a new function; it is created here only so that PUBLIC loses EXECUTE on it, as on
-- every function of this database. Its body is its file's (prisma/functions), which the
-- migrator applies right after the migrations.
CREATE FUNCTION "ledger_released_hold_cap"(p_hold_id TEXT, p_cost BIGINT) RETURNS BIGINT
LANGUAGE sql AS $$ SELECT 0::bigint $$;
REVOKE ALL ON FUNCTION "ledger_released_hold_cap"(TEXT, BIGINT) FROM PUBLIC;
