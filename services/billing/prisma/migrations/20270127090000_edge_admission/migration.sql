-- Edge admits API-key requests in billing's database itself (ADR 0070, step 3).
--
-- `billing_admit_batch_v1`: a batch of admissions in one call (it was a statement billing sent);
-- `billing_admit_api_keys_v1`: the same for API keys only, SECURITY DEFINER, the one admission
-- function edge's role may execute; `billing_touch_api_key_v1`: an API key's last use. Their
-- bodies are their files in ../../functions/; here they are created empty so that EXECUTE can be
-- revoked from PUBLIC before anything can call them.
CREATE FUNCTION "billing_admit_batch_v1"(items JSONB) RETURNS SETOF billing_admission
LANGUAGE sql AS $$ SELECT NULL::billing_admission WHERE false $$;
REVOKE ALL ON FUNCTION "billing_admit_batch_v1"(JSONB) FROM PUBLIC;

CREATE FUNCTION "billing_admit_api_keys_v1"(items JSONB) RETURNS SETOF billing_admission
LANGUAGE sql AS $$ SELECT NULL::billing_admission WHERE false $$;
REVOKE ALL ON FUNCTION "billing_admit_api_keys_v1"(JSONB) FROM PUBLIC;

CREATE FUNCTION "billing_touch_api_key_v1"(
    p_account_id TEXT, p_key_name TEXT, p_at TIMESTAMPTZ, p_interval_s DOUBLE PRECISION
) RETURNS void
LANGUAGE sql AS $$ SELECT $$;
REVOKE ALL ON FUNCTION "billing_touch_api_key_v1"(TEXT, TEXT, TIMESTAMPTZ, DOUBLE PRECISION) FROM PUBLIC;
