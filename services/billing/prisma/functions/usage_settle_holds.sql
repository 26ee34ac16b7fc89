-- usage_settle_holds: its live definition. To change it: README.md in this directory.
--
-- SECURITY DEFINER (ADR 0070): the worker's role may execute this function and nothing else, so
-- the function runs with its owner's table rights; the search_path is fixed for that reason.
--
-- Settlement, then the usage record of each hold THIS call settled, written once with what the
-- worker reported (the trigger on holds writes only the records of holds that end otherwise).
-- Arrays are parallel to hold_ids; NULL entries mean "not reported". A hold settled by this call
-- has a settlement transaction with this call's transaction id (a replay's does not). Its record
-- exists already only when the sweeper released the hold unpublished (written then, completed
-- by the settlement) or the same call is replayed: it is then completed as before.
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
-- Every row here and in the settlement it calls is found by its key, from the batch's arrays
-- (a LATERAL subquery by key alone, which the planner may not flatten or push a condition into:
-- OFFSET 0). A cached generic plan made while the tables were young (statistics: tiny)
-- otherwise read all settled holds through their status index, on every call.
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $$
DECLARE
    h RECORD;
BEGIN
    RETURN QUERY SELECT * FROM ledger_settle_holds(p_hold_ids, p_input_tokens, p_output_tokens,
                                                   p_transaction_ids, p_settled_at);
    -- A batch of distinct holds writes its records in one statement; one that names a hold
    -- twice, one by one (ON CONFLICT may not touch a row twice in one statement).
    IF (SELECT count(DISTINCT u.id) FROM unnest(p_hold_ids) AS u(id))
       = COALESCE(array_length(p_hold_ids, 1), 0) THEN
        INSERT INTO usage_records AS u
               (hold_id, request_id, account_id, api_key_name, scoped_token_id, endpoint, model,
                priority, hold_status, outcome, prompt_tokens, completion_tokens,
                reasoning_tokens, cost_micro_dzd, queue_latency_ms, generation_latency_ms,
                created_at, ended_at)
        SELECT x.id, x.request_id, x.account_id, x.api_key_name, x.scoped_token_id, x.endpoint,
               x.model, x.priority, 'settled',
               CASE WHEN r.cancelled THEN 'cancelled' ELSE 'succeeded' END,
               r.tokens_in, r.tokens_out, COALESCE(r.reasoning, 0), x.settled_amount_micro_dzd,
               GREATEST(0, extract(epoch FROM r.started - x.created_at) * 1000)::bigint,
               r.generation_ms, x.created_at, x.finalized_at
          FROM unnest(p_hold_ids, p_input_tokens, p_output_tokens, p_transaction_ids,
                      p_reasoning_tokens, p_started_at, p_generation_ms, p_cancelled)
               AS r(id, tokens_in, tokens_out, txn, reasoning, started, generation_ms, cancelled)
         CROSS JOIN LATERAL (
               SELECT hh.* FROM holds hh
                 JOIN ledger_transactions t ON t.id = r.txn AND t.hold_id = hh.id
                WHERE hh.id = r.id OFFSET 0) x
         WHERE x.status = 'settled'
        ON CONFLICT ON CONSTRAINT usage_records_pkey DO UPDATE
           SET prompt_tokens = EXCLUDED.prompt_tokens,
               completion_tokens = EXCLUDED.completion_tokens,
               reasoning_tokens = EXCLUDED.reasoning_tokens,
               outcome = CASE WHEN EXCLUDED.outcome = 'cancelled' THEN 'cancelled'
                              ELSE u.outcome END,
               queue_latency_ms = EXCLUDED.queue_latency_ms,
               generation_latency_ms = EXCLUDED.generation_latency_ms;
        RETURN;
    END IF;
    FOR i IN 1 .. COALESCE(array_length(p_hold_ids, 1), 0) LOOP
        SELECT x.id, x.request_id, x.account_id, x.api_key_name, x.scoped_token_id, x.endpoint,
               x.model, x.priority, x.status, x.settled_amount_micro_dzd, x.created_at,
               x.finalized_at
          INTO h FROM holds x WHERE x.id = p_hold_ids[i];
        CONTINUE WHEN NOT FOUND OR h.status <> 'settled' OR NOT EXISTS (
            SELECT 1 FROM ledger_transactions t
             WHERE t.id = p_transaction_ids[i] AND t.hold_id = p_hold_ids[i]);
        INSERT INTO usage_records AS u
               (hold_id, request_id, account_id, api_key_name, scoped_token_id, endpoint, model,
                priority, hold_status, outcome, prompt_tokens, completion_tokens,
                reasoning_tokens, cost_micro_dzd, queue_latency_ms, generation_latency_ms,
                created_at, ended_at)
        VALUES (h.id, h.request_id, h.account_id, h.api_key_name, h.scoped_token_id, h.endpoint,
                h.model, h.priority, 'settled',
                CASE WHEN p_cancelled[i] THEN 'cancelled' ELSE 'succeeded' END,
                p_input_tokens[i], p_output_tokens[i], COALESCE(p_reasoning_tokens[i], 0),
                h.settled_amount_micro_dzd,
                GREATEST(0, extract(epoch FROM p_started_at[i] - h.created_at) * 1000)::bigint,
                p_generation_ms[i], h.created_at, h.finalized_at)
        ON CONFLICT ON CONSTRAINT usage_records_pkey DO UPDATE
           SET prompt_tokens = EXCLUDED.prompt_tokens,
               completion_tokens = EXCLUDED.completion_tokens,
               reasoning_tokens = EXCLUDED.reasoning_tokens,
               outcome = CASE WHEN p_cancelled[i] THEN 'cancelled' ELSE u.outcome END,
               queue_latency_ms = EXCLUDED.queue_latency_ms,
               generation_latency_ms = EXCLUDED.generation_latency_ms;
    END LOOP;
END;
$$;
