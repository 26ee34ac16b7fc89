-- billing_admission_credential: its live definition. To change it: README.md in this directory.
--
-- Admission, step 1 (billing_admit_v5): who is calling. An API key by its digest; or a scoped
-- token, whose signing key must still be the row its signature was verified with (else
-- `key_changed`: Node reads the key again) and whose registry row, once it has one, is
-- authoritative (`token_mismatch`, `token_revoked`). Then the account's suspension. Nothing is
-- counted yet.
CREATE OR REPLACE FUNCTION "billing_admission_credential"(r billing_admission_request)
RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    adm billing_admission;
    a RECORD;
    t RECORD;
BEGIN
    IF r.key_digest IS NOT NULL THEN
        SELECT ac.id, ac.status::text AS status, ac.rate_limit_per_minute,
               ac.webhook_format::text AS webhook_format, k.name, k.key_digest, k.id AS key_id,
               k.requests_per_minute, k.tokens_per_minute, k.models
          INTO a
          FROM api_keys k JOIN accounts ac ON ac.id = k.account_id
         WHERE k.key_digest = r.key_digest;
        IF NOT FOUND THEN adm.outcome := 'invalid_api_key'; RETURN adm; END IF;
        adm.key_digest := a.key_digest;
    ELSE
        SELECT ac.id, ac.status::text AS status, ac.rate_limit_per_minute,
               ac.webhook_format::text AS webhook_format, k.name, k.key_digest, k.id AS key_id,
               k.requests_per_minute, k.tokens_per_minute, k.models
          INTO a
          FROM api_keys k JOIN accounts ac ON ac.id = k.account_id
         WHERE k.id = r.signing_key_id AND k.account_id = r.account_id
           AND k.key_digest = r.signing_key_digest;
        IF NOT FOUND THEN adm.outcome := 'key_changed'; RETURN adm; END IF;
        SELECT st.id, st.account_id, st.api_key_name, st.models, st.spending_limit_micro_dzd,
               st.expires_at, st.revoked_at, st.requests_per_minute, st.tokens_per_minute
          INTO t FROM scoped_tokens st WHERE st.digest = r.token_digest;
        adm.registered := FOUND;
        IF adm.registered THEN
            IF t.account_id <> a.id OR t.api_key_name <> a.name THEN
                adm.outcome := 'token_mismatch'; RETURN adm;
            END IF;
            IF t.revoked_at IS NOT NULL THEN adm.outcome := 'token_revoked'; RETURN adm; END IF;
            -- Once registered, the registry row is authoritative.
            adm.token_id := t.id; adm.token_models := NULLIF(t.models, ARRAY[]::text[]);
            adm.token_limit := t.spending_limit_micro_dzd; adm.token_expires_at := t.expires_at;
            adm.token_requests_per_minute := t.requests_per_minute;
            adm.token_tokens_per_minute := t.tokens_per_minute;
        ELSE
            -- A client-minted token: its own claims, until admission registers it.
            adm.token_models := r.token_models; adm.token_limit := r.token_limit;
            adm.token_expires_at := r.token_expires_at;
        END IF;
    END IF;
    adm.account_id := a.id; adm.api_key_name := a.name; adm.account_status := a.status;
    adm.rate_limit_per_minute := a.rate_limit_per_minute; adm.webhook_format := a.webhook_format;
    adm.key_id := a.key_id;
    adm.key_requests_per_minute := a.requests_per_minute;
    adm.key_tokens_per_minute := a.tokens_per_minute;
    adm.key_models := NULLIF(a.models, ARRAY[]::text[]);
    IF a.status = 'suspended' THEN adm.outcome := 'account_suspended'; END IF;
    RETURN adm;
END;
$$;
