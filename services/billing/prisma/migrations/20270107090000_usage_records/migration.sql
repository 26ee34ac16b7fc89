-- Issue 16: one usage record per request that reached admission, written when its hold ends, in
-- the transaction that ends it. Built around the hot-path functions, never inside them, so their
-- bodies stay as they are:
--   * admission's context (API key name, endpoint, request id) is stored on the hold as it is
--     inserted, by a wrapper of billing_admit (`billing_admit_with_context`) and a BEFORE INSERT
--     trigger, in the same statement;
--   * a trigger on holds writes the record when status leaves 'pending', whoever ends it
--     (settle, void, the sweeper, the Prisma path): cost = the settled amount, outcome mapped
--     from the hold's final status;
--   * wrappers of ledger_settle_holds / ledger_void_hold (`usage_settle_holds`,
--     `usage_void_hold`) then complete the record with what the worker reports (tokens,
--     reasoning tokens, latencies, cancellation), in the same statement.
-- Retention: records older than USAGE_RETENTION_DAYS are deleted by billing's scheduler; their
-- counts and costs are first added to `usage_purged_totals`, so the reconciliation with the
-- ledger stays exact after a purge.

ALTER TABLE "holds" ADD COLUMN "api_key_name" TEXT;
ALTER TABLE "holds" ADD COLUMN "endpoint" TEXT;
ALTER TABLE "holds" ADD COLUMN "request_id" TEXT;

CREATE TABLE "usage_records" (
    "hold_id" TEXT NOT NULL,                  -- = the job id
    "request_id" TEXT,
    "account_id" TEXT NOT NULL,
    "api_key_name" TEXT,
    "scoped_token_id" TEXT,
    "endpoint" TEXT,
    "model" TEXT NOT NULL,
    "priority" BOOLEAN NOT NULL,
    "hold_status" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "prompt_tokens" BIGINT NOT NULL DEFAULT 0,
    "completion_tokens" BIGINT NOT NULL DEFAULT 0,
    "reasoning_tokens" BIGINT NOT NULL DEFAULT 0,
    "cost_micro_dzd" BIGINT NOT NULL,
    "queue_latency_ms" BIGINT,
    "generation_latency_ms" BIGINT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,     -- admission (the hold placed)
    "ended_at" TIMESTAMPTZ(3) NOT NULL,       -- the hold ended (the cost was posted)

    CONSTRAINT "usage_records_pkey" PRIMARY KEY ("hold_id"),
    CONSTRAINT "usage_records_outcome_check"
        CHECK ("outcome" IN ('succeeded', 'failed', 'cancelled', 'refused')),
    CONSTRAINT "usage_records_hold_status_check"
        CHECK ("hold_status" IN ('settled', 'voided', 'expired')),
    CONSTRAINT "usage_records_counts_check"
        CHECK ("prompt_tokens" >= 0 AND "completion_tokens" >= 0 AND "reasoning_tokens" >= 0
               AND "cost_micro_dzd" >= 0 AND "queue_latency_ms" >= 0
               AND "generation_latency_ms" >= 0)
);
-- Aggregations and the request log read one account's range, or everyone's; the purge reads
-- by age.
CREATE INDEX "usage_records_account_id_ended_at_hold_id_idx" ON "usage_records" ("account_id", "ended_at", "hold_id");
CREATE INDEX "usage_records_ended_at_hold_id_idx" ON "usage_records" ("ended_at", "hold_id");

CREATE TABLE "usage_purged_totals" (
    "account_id" TEXT NOT NULL,
    "requests" BIGINT NOT NULL,
    "cost_micro_dzd" BIGINT NOT NULL,
    -- Holds that ended before this were purged (or are expected to be).
    "purged_before" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "usage_purged_totals_pkey" PRIMARY KEY ("account_id")
);

-- The record, from the hold as it ends. Outcome: settled → succeeded (the settle wrapper turns a
-- cancellation into cancelled); voided → failed (the void wrapper says cancelled or refused when
-- the caller knows); expired → refused when the job was never published (never queued), failed
-- otherwise.
CREATE FUNCTION "usage_record_hold_end"() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
BEGIN
    INSERT INTO usage_records (hold_id, request_id, account_id, api_key_name, scoped_token_id,
                               endpoint, model, priority, hold_status, outcome, cost_micro_dzd,
                               created_at, ended_at)
    VALUES (NEW.id, NEW.request_id, NEW.account_id, NEW.api_key_name, NEW.scoped_token_id,
            NEW.endpoint, NEW.model, NEW.priority, NEW.status::text,
            CASE WHEN NEW.status = 'settled' THEN 'succeeded'
                 WHEN NEW.status = 'expired' AND NEW.published_at IS NULL THEN 'refused'
                 ELSE 'failed' END,
            COALESCE(NEW.settled_amount_micro_dzd, 0), NEW.created_at,
            COALESCE(NEW.finalized_at, now()));
    RETURN NULL;
END;
$$;

CREATE TRIGGER "holds_usage_record" AFTER UPDATE OF "status" ON "holds"
    FOR EACH ROW WHEN (OLD."status" = 'pending' AND NEW."status" <> 'pending')
    EXECUTE FUNCTION "usage_record_hold_end"();

-- The request's context on the hold admission inserts: the wrapper below passes it in a
-- transaction-local setting, read by this trigger as the row is inserted (no second write of the
-- hold). Only the hold named in the setting is touched: never a replayed hold or another
-- account's (those are not inserted), never a hold placed by another path (no setting).
CREATE FUNCTION "holds_admission_context"() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    raw TEXT := current_setting('billing.admission_context', true);
    ctx JSON;
BEGIN
    IF raw IS NULL OR raw = '' THEN RETURN NEW; END IF;
    ctx := raw::json;
    IF ctx->>'hold_id' IS DISTINCT FROM NEW.id THEN RETURN NEW; END IF;
    NEW.endpoint := ctx->>'endpoint';
    NEW.request_id := ctx->>'request_id';
    -- The API key's name, or the name of the key that signed the scoped token (unique indexes).
    NEW.api_key_name := COALESCE(
        (SELECT k.name FROM api_keys k WHERE k.key_digest = ctx->>'key_digest'),
        (SELECT k.name FROM api_keys k WHERE k.id = ctx->>'signing_key_id'));
    RETURN NEW;
END;
$$;

CREATE TRIGGER "holds_admission_context" BEFORE INSERT ON "holds"
    FOR EACH ROW EXECUTE FUNCTION "holds_admission_context"();

-- Admission with the request's context for its usage record (see the trigger above).
CREATE FUNCTION "billing_admit_with_context"(
    p_key_digest TEXT, p_account_id TEXT, p_signing_key_id TEXT, p_signing_key_digest TEXT,
    p_token_digest TEXT, p_token_models TEXT[], p_token_limit BIGINT,
    p_token_expires_at TIMESTAMPTZ, p_new_token_id TEXT, p_window_start_ms BIGINT, p_model TEXT,
    p_input_tokens BIGINT, p_max_output_tokens BIGINT, p_choices INTEGER, p_priority BOOLEAN,
    p_providers TEXT[], p_kinds TEXT[], p_node_unsupported TEXT,
    p_hold_id TEXT, p_hold_expires_at TIMESTAMPTZ, p_now TIMESTAMPTZ,
    p_endpoint TEXT, p_request_id TEXT
) RETURNS TABLE (
    outcome TEXT, account_id TEXT, api_key_name TEXT, account_status TEXT,
    rate_limit_per_minute INTEGER, webhook_format TEXT, key_digest TEXT, window_count INTEGER,
    token_id TEXT, token_models TEXT[], token_limit BIGINT, token_spent BIGINT,
    token_reserved BIGINT, token_expires_at TIMESTAMPTZ,
    model_id TEXT, model_kind TEXT, model_provider TEXT, model_protocol TEXT,
    model_upstream TEXT, model_input_price BIGINT, model_output_price BIGINT,
    model_max_output_tokens INTEGER, model_nodes JSONB, model_updated_at TIMESTAMPTZ,
    reserved_output_tokens INTEGER, worst_case_micro_dzd BIGINT,
    hold_id TEXT, hold_amount_micro_dzd BIGINT, hold_expires_at TIMESTAMPTZ, hold_status TEXT
)
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM set_config('billing.admission_context',
                       json_build_object('hold_id', p_hold_id, 'endpoint', p_endpoint,
                                         'request_id', p_request_id, 'key_digest', p_key_digest,
                                         'signing_key_id', p_signing_key_id)::text,
                       true);
    RETURN QUERY SELECT * FROM billing_admit(
        p_key_digest, p_account_id, p_signing_key_id, p_signing_key_digest, p_token_digest,
        p_token_models, p_token_limit, p_token_expires_at, p_new_token_id, p_window_start_ms,
        p_model, p_input_tokens, p_max_output_tokens, p_choices, p_priority, p_providers, p_kinds,
        p_node_unsupported, p_hold_id, p_hold_expires_at, p_now);
    PERFORM set_config('billing.admission_context', '', true);
END;
$$;

-- Settlement, then the record completed with what the worker reported. Arrays are parallel to
-- hold_ids; NULL entries mean "not reported". Only holds settled by THIS call are completed: their
-- settlement transaction carries this call's transaction id (a replay's does not).
CREATE FUNCTION "usage_settle_holds"(
    p_hold_ids TEXT[], p_input_tokens BIGINT[], p_output_tokens BIGINT[],
    p_transaction_ids TEXT[], p_settled_at TIMESTAMPTZ, p_reasoning_tokens BIGINT[],
    p_started_at TIMESTAMPTZ[], p_generation_ms BIGINT[], p_cancelled BOOLEAN[]
) RETURNS TABLE (
    ord INTEGER, outcome TEXT, hold_id TEXT, account_id TEXT, status TEXT, model TEXT,
    amount_micro_dzd BIGINT, cost_micro_dzd BIGINT, transaction_id TEXT,
    expires_at TIMESTAMPTZ, finalized_at TIMESTAMPTZ,
    credits BIGINT, debits BIGINT, pending BIGINT, error_state TEXT, error_message TEXT
)
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
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

-- Void, then the record's outcome (failed unless the caller says cancelled or refused) and
-- latencies, when this call voided the hold (the record was written by this transaction).
CREATE FUNCTION "usage_void_hold"(
    void_hold_id TEXT, voided_at TIMESTAMPTZ, p_outcome TEXT, p_started_at TIMESTAMPTZ,
    p_generation_ms BIGINT
) RETURNS TABLE (
    outcome TEXT, account_id TEXT, status TEXT, amount_micro_dzd BIGINT,
    settled_amount_micro_dzd BIGINT, expires_at TIMESTAMPTZ, finalized_at TIMESTAMPTZ,
    credits BIGINT, debits BIGINT, pending BIGINT
)
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
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

-- Only billing's runtime role (granted by the migration command) may call them.
REVOKE ALL ON FUNCTION "billing_admit_with_context"(TEXT, TEXT, TEXT, TEXT, TEXT, TEXT[], BIGINT, TIMESTAMPTZ, TEXT, BIGINT, TEXT, BIGINT, BIGINT, INTEGER, BOOLEAN, TEXT[], TEXT[], TEXT, TEXT, TIMESTAMPTZ, TIMESTAMPTZ, TEXT, TEXT) FROM PUBLIC;
REVOKE ALL ON FUNCTION "usage_settle_holds"(TEXT[], BIGINT[], BIGINT[], TEXT[], TIMESTAMPTZ, BIGINT[], TIMESTAMPTZ[], BIGINT[], BOOLEAN[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION "usage_void_hold"(TEXT, TIMESTAMPTZ, TEXT, TIMESTAMPTZ, BIGINT) FROM PUBLIC;

-- Holds that ended before this migration have no record (their requests predate usage
-- records): they count as purged, so the reconciliation holds from the start.
INSERT INTO usage_purged_totals (account_id, requests, cost_micro_dzd, purged_before)
SELECT h.account_id, count(*), COALESCE(sum(h.settled_amount_micro_dzd), 0),
       GREATEST(now(), COALESCE(max(h.finalized_at), now())) + interval '1 millisecond'
  FROM holds h WHERE h.status <> 'pending' GROUP BY h.account_id;
