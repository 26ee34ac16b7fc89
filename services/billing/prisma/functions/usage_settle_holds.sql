-- usage_settle_holds: its live definition. To change it: README.md in this directory.
--
-- SECURITY DEFINER (ADR 0070): the worker's role may execute this function and nothing else, so
-- the function runs with its owner's table rights; the search_path is fixed for that reason.
--
-- Settlement, then the record completed with what the worker reported. Arrays are parallel to
-- hold_ids; NULL entries mean "not reported". Only holds settled by THIS call are completed: their
-- settlement transaction carries this call's transaction id (a replay's does not).
CREATE OR REPLACE FUNCTION "usage_settle_holds"(
    p_hold_ids TEXT[], p_input_tokens BIGINT[], p_output_tokens BIGINT[],
    p_transaction_ids TEXT[], p_settled_at TIMESTAMPTZ, p_reasoning_tokens BIGINT[],
    p_started_at TIMESTAMPTZ[], p_generation_ms BIGINT[], p_cancelled BOOLEAN[]
) RETURNS TABLE (
    ord INTEGER, outcome TEXT, hold_id TEXT, account_id TEXT, status TEXT, model TEXT,
    amount_micro_dzd BIGINT, cost_micro_dzd BIGINT, transaction_id TEXT,
    expires_at TIMESTAMPTZ, finalized_at TIMESTAMPTZ,
    credits BIGINT, debits BIGINT, pending BIGINT, error_state TEXT, error_message TEXT
)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT * FROM ledger_settle_holds(p_hold_ids, p_input_tokens, p_output_tokens,
                                                   p_transaction_ids, p_settled_at);
    -- One primary-key update per item (never a join the planner could turn into a scan).
    FOR i IN 1 .. COALESCE(array_length(p_hold_ids, 1), 0) LOOP
        UPDATE usage_records u
           SET prompt_tokens = p_input_tokens[i], completion_tokens = p_output_tokens[i],
               reasoning_tokens = COALESCE(p_reasoning_tokens[i], 0),
               outcome = CASE WHEN p_cancelled[i] THEN 'cancelled' ELSE u.outcome END,
               queue_latency_ms =
                   GREATEST(0, extract(epoch FROM p_started_at[i] - u.created_at) * 1000)::bigint,
               generation_latency_ms = p_generation_ms[i]
         WHERE u.hold_id = p_hold_ids[i]
           AND EXISTS (SELECT 1 FROM ledger_transactions t
                        WHERE t.id = p_transaction_ids[i] AND t.hold_id = p_hold_ids[i]);
    END LOOP;
END;
$$;
