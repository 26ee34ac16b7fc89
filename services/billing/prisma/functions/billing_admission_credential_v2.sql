-- billing_admission_credential_v2: its live definition. To change it: README.md in this directory.
--
-- Admission, step 1 (billing_admit_batch_v1): who is calling, from the rows the batch's read
-- found for the item: an API key by its digest; or a scoped token, whose signing
-- key must still be the row its signature was verified with (else `key_changed`: Node reads the
-- key again) and whose registry row, once it has one, is authoritative (`token_mismatch`,
-- `token_revoked`). Then the account's suspension. Nothing is counted yet. No statement: a row
-- not found is NULL.
CREATE OR REPLACE FUNCTION "billing_admission_credential_v2"(
    r billing_admission_request, k api_keys, ac accounts, t scoped_tokens
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    adm billing_admission;
BEGIN
    IF k.id IS NULL OR ac.id IS NULL THEN
        adm.outcome := CASE WHEN r.key_digest IS NOT NULL THEN 'invalid_api_key' ELSE 'key_changed' END;
        RETURN adm;
    END IF;
    IF r.key_digest IS NOT NULL THEN
        adm.key_digest := k.key_digest;
    ELSE
        adm.registered := t.id IS NOT NULL;
        IF adm.registered THEN
            IF t.account_id <> ac.id OR t.api_key_name <> k.name THEN
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
    adm.account_id := ac.id; adm.api_key_name := k.name; adm.account_status := ac.status::text;
    adm.rate_limit_per_minute := ac.rate_limit_per_minute;
    adm.webhook_format := ac.webhook_format::text;
    adm.key_id := k.id;
    adm.key_requests_per_minute := k.requests_per_minute;
    adm.key_tokens_per_minute := k.tokens_per_minute;
    adm.key_models := NULLIF(k.models, ARRAY[]::text[]);
    IF ac.status = 'suspended' THEN adm.outcome := 'account_suspended'; END IF;
    RETURN adm;
END;
$$;
