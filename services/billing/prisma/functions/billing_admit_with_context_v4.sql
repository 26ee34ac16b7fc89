-- billing_admit_with_context_v4: its live definition. To change it: README.md in this directory.
--
-- billing_admit_with_context (migration 20270107090000) over billing_admit_v4 (per-key rate
-- limits).
CREATE OR REPLACE FUNCTION "billing_admit_with_context_v4"(
    p_key_digest TEXT, p_account_id TEXT, p_signing_key_id TEXT, p_signing_key_digest TEXT,
    p_token_digest TEXT, p_token_models TEXT[], p_token_limit BIGINT,
    p_token_expires_at TIMESTAMPTZ, p_new_token_id TEXT, p_window_start_ms BIGINT, p_model TEXT,
    p_input_tokens BIGINT, p_max_output_tokens BIGINT, p_choices INTEGER, p_priority BOOLEAN,
    p_providers TEXT[], p_kinds TEXT[], p_node_unsupported TEXT,
    p_media_kinds TEXT[], p_image_count INTEGER,
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
    hold_id TEXT, hold_amount_micro_dzd BIGINT, hold_expires_at TIMESTAMPTZ, hold_status TEXT,
    refused_media_kind TEXT, model_input_modalities TEXT[], model_image_tokens INTEGER,
    model_remote_images BOOLEAN,
    budget_scope TEXT, budget_limit BIGINT, budget_spent BIGINT, budget_reserved BIGINT,
    budget_period TEXT, budget_resets_at TIMESTAMPTZ,
    key_requests_per_minute INTEGER, key_window_count INTEGER,
    token_requests_per_minute INTEGER, token_window_count INTEGER,
    key_tokens_per_minute BIGINT, key_tokens_used BIGINT,
    token_tokens_per_minute BIGINT, token_tokens_used BIGINT, rate_tokens BIGINT
)
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
BEGIN
    PERFORM set_config('billing.admission_context',
                       json_build_object('hold_id', p_hold_id, 'endpoint', p_endpoint,
                                         'request_id', p_request_id, 'key_digest', p_key_digest,
                                         'signing_key_id', p_signing_key_id)::text,
                       true);
    RETURN QUERY SELECT * FROM billing_admit_v4(
        p_key_digest, p_account_id, p_signing_key_id, p_signing_key_digest, p_token_digest,
        p_token_models, p_token_limit, p_token_expires_at, p_new_token_id, p_window_start_ms,
        p_model, p_input_tokens, p_max_output_tokens, p_choices, p_priority, p_providers, p_kinds,
        p_node_unsupported, p_media_kinds, p_image_count, p_hold_id, p_hold_expires_at, p_now);
    PERFORM set_config('billing.admission_context', '', true);
END;
$$;
