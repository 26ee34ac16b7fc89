-- usage_void_hold: its live definition. To change it: README.md in this directory.
--
-- SECURITY DEFINER (ADR 0070): the worker's role may execute this function and nothing else, so
-- the function runs with its owner's table rights; the search_path is fixed for that reason.
--
-- Void, then the record's outcome (failed unless the caller says cancelled or refused) and
-- latencies, when this call voided the hold (the record was written by this transaction).
CREATE OR REPLACE FUNCTION "usage_void_hold"(
    void_hold_id TEXT, voided_at TIMESTAMPTZ, p_outcome TEXT, p_started_at TIMESTAMPTZ,
    p_generation_ms BIGINT
) RETURNS TABLE (
    outcome TEXT, account_id TEXT, status TEXT, amount_micro_dzd BIGINT,
    settled_amount_micro_dzd BIGINT, expires_at TIMESTAMPTZ, finalized_at TIMESTAMPTZ,
    credits BIGINT, debits BIGINT, pending BIGINT
)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT * FROM ledger_void_hold(void_hold_id, voided_at);
    UPDATE usage_records u
       SET outcome = COALESCE(p_outcome, u.outcome),
           queue_latency_ms = GREATEST(0, (extract(epoch FROM p_started_at - u.created_at) * 1000))::bigint,
           generation_latency_ms = p_generation_ms
     WHERE u.hold_id = void_hold_id AND u.xmin = pg_current_xact_id()::xid;
END;
$$;
