-- billing_admission_budgets: its live definition. To change it: README.md in this directory.
--
-- Admission, step 8 (billing_admit_batch_v1): the key's budget, then the registered token's, each
-- row locked (after the balance and token rows: the lock order of every path that ends a hold)
-- and checked by billing_admission_budget. The hold is dated no earlier than the windows it
-- was checked against.
CREATE OR REPLACE FUNCTION "billing_admission_budgets"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    bb budgets;
BEGIN
    adm.hold_created_at := r.now_at;
    SELECT * INTO bb FROM budgets WHERE api_key_id = adm.key_id FOR UPDATE;
    IF FOUND THEN
        adm := billing_admission_budget(adm, bb, 'api_key', r.now_at);
        IF adm.outcome IS NOT NULL THEN RETURN adm; END IF;
    END IF;
    IF r.key_digest IS NULL AND adm.registered THEN
        SELECT * INTO bb FROM budgets WHERE scoped_token_id = adm.token_id FOR UPDATE;
        IF FOUND THEN adm := billing_admission_budget(adm, bb, 'scoped_token', r.now_at); END IF;
    END IF;
    RETURN adm;
END;
$$;
