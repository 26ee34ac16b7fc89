-- billing_touch_api_key_v1: its live definition. To change it: README.md in this directory.
--
-- An API key's last use (the dashboard's key list), written at most once per interval: a row
-- written less than `p_interval_s` before `p_at` is left alone. SECURITY DEFINER (ADR 0070): edge's
-- admission role may execute it, and may not update `api_keys` itself; the search_path is fixed
-- for that reason.
CREATE OR REPLACE FUNCTION "billing_touch_api_key_v1"(
    p_account_id TEXT, p_key_name TEXT, p_at TIMESTAMPTZ, p_interval_s DOUBLE PRECISION
) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
    UPDATE api_keys SET last_used_at = p_at
     WHERE account_id = p_account_id AND name = p_key_name
       AND (last_used_at IS NULL OR last_used_at <= p_at - make_interval(secs => p_interval_s));
$$;
