-- billing_admission_token_limit: its live definition. To change it: README.md in this directory.
--
-- Admission, step 6 (billing_admit_batch_v1): a scoped token's spending limit. Its registry row is
-- locked now (after the balance row) and read again: revoked, or registered by someone else,
-- since step 1. What it spent plus what it holds must leave room for the worst case (402). A
-- client-minted token not registered yet has spent nothing. API keys pass.
CREATE OR REPLACE FUNCTION "billing_admission_token_limit"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    t RECORD;
    limit_now BIGINT := r.token_limit;
BEGIN
    IF r.key_digest IS NOT NULL THEN RETURN adm; END IF;
    SELECT st.id, st.account_id, st.api_key_name, st.spending_limit_micro_dzd, st.spent_micro_dzd,
           st.reserved_micro_dzd, st.revoked_at
      INTO t FROM scoped_tokens st WHERE st.digest = r.token_digest FOR UPDATE;
    adm.registered := FOUND;
    adm.token_spent := 0; adm.token_reserved := 0;
    IF adm.registered THEN
        IF t.account_id <> adm.account_id OR t.api_key_name <> adm.api_key_name THEN
            adm.outcome := 'token_mismatch'; RETURN adm;
        END IF;
        IF t.revoked_at IS NOT NULL THEN adm.outcome := 'token_revoked'; RETURN adm; END IF;
        adm.token_id := t.id; limit_now := t.spending_limit_micro_dzd;
        adm.token_spent := t.spent_micro_dzd; adm.token_reserved := t.reserved_micro_dzd;
    END IF;
    IF limit_now IS NOT NULL AND (adm.token_spent >= limit_now
         OR adm.token_spent + adm.token_reserved + adm.worst_case_micro_dzd > limit_now) THEN
        adm.token_limit := limit_now;
        adm.outcome := 'budget_exhausted';
    END IF;
    RETURN adm;
END;
$$;
