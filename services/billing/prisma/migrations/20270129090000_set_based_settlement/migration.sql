-- A batch of pending holds is settled set-based, one statement per table
-- (prisma/functions/ledger_settle_pending_holds.sql; ledger_settle_holds calls it first).
-- The function is new; it is created here only so that PUBLIC loses EXECUTE on it, as on every
-- function of this database. Its body is its file's, which the migrator applies right after the
-- migrations.
CREATE FUNCTION "ledger_settle_pending_holds"(
    hold_ids TEXT[], input_tokens BIGINT[], output_tokens BIGINT[], transaction_ids TEXT[],
    settled_at TIMESTAMPTZ
) RETURNS TABLE (
    ord INTEGER, outcome TEXT, hold_id TEXT, account_id TEXT, status TEXT, model TEXT,
    amount_micro_dzd BIGINT, cost_micro_dzd BIGINT, transaction_id TEXT,
    expires_at TIMESTAMPTZ, finalized_at TIMESTAMPTZ,
    credits BIGINT, debits BIGINT, pending BIGINT, error_state TEXT, error_message TEXT
) LANGUAGE sql AS $$ SELECT NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text,
    NULL::text, NULL::bigint, NULL::bigint, NULL::text, NULL::timestamptz, NULL::timestamptz,
    NULL::bigint, NULL::bigint, NULL::bigint, NULL::text, NULL::text WHERE false $$;
REVOKE ALL ON FUNCTION "ledger_settle_pending_holds"(TEXT[], BIGINT[], BIGINT[], TEXT[], TIMESTAMPTZ)
    FROM PUBLIC;
