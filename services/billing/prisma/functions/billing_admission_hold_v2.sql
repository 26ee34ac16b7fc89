-- billing_admission_hold_v2: its live definition. To change it: README.md in this directory.
--
-- Admission, step 9 (billing_admit_batch_v1): the balance must cover the worst case (402); a
-- client-minted token is registered with its first hold, nowhere earlier (a concurrent
-- revocation may have registered it first: it then exists, revoked); then the hold is admitted,
-- at the model's prices, with what it reserves: the token's, the budgets' (released, and the
-- cost counted, by holds_budget_end when the hold ends) and the tokens windows' (given back,
-- the part unused, by holds_rate_end), written here; the hold itself and the balance's pending
-- amount are written for the whole batch by billing_admission_place_holds, which the batch's
-- later items do not need: they are given what the account's earlier items left.
CREATE OR REPLACE FUNCTION "billing_admission_hold_v2"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    amount BIGINT := adm.worst_case_micro_dzd;
    rated BOOLEAN := adm.key_tokens_used IS NOT NULL OR adm.token_tokens_used IS NOT NULL;
BEGIN
    IF adm.available_micro_dzd IS NULL OR adm.available_micro_dzd <= 0
       OR adm.available_micro_dzd < amount THEN
        adm.outcome := 'insufficient_balance'; RETURN adm;
    END IF;
    IF r.key_digest IS NULL AND NOT adm.registered THEN
        INSERT INTO scoped_tokens (id, digest, account_id, api_key_name, models, expires_at,
                                   spending_limit_micro_dzd, origin, created_at)
        VALUES (r.new_token_id, r.token_digest, adm.account_id, adm.api_key_name,
                COALESCE(r.token_models, ARRAY[]::text[]), r.token_expires_at, r.token_limit,
                'client', r.now_at)
        ON CONFLICT (digest) DO NOTHING
        RETURNING id INTO adm.token_id;
        IF adm.token_id IS NULL THEN adm.outcome := 'token_revoked'; RETURN adm; END IF;
    END IF;
    IF adm.token_id IS NOT NULL THEN
        UPDATE scoped_tokens st SET reserved_micro_dzd = st.reserved_micro_dzd + amount
         WHERE st.id = adm.token_id;
    END IF;
    IF adm.key_budget_id IS NOT NULL OR adm.token_budget_id IS NOT NULL THEN
        UPDATE budgets SET reserved_micro_dzd = reserved_micro_dzd + amount
         WHERE id IN (adm.key_budget_id, adm.token_budget_id);
    END IF;
    IF rated THEN
        UPDATE key_token_windows w SET tokens = w.tokens + adm.rate_tokens
         WHERE w.window_start_ms = r.window_start_ms
           AND w.owner_id IN (CASE WHEN adm.key_tokens_used IS NOT NULL THEN adm.key_id END,
                              CASE WHEN adm.token_tokens_used IS NOT NULL THEN adm.token_id END);
    END IF;
    adm.hold_id := r.hold_id; adm.hold_amount_micro_dzd := amount;
    adm.hold_expires_at := r.hold_expires_at; adm.hold_status := 'pending';
    adm.outcome := 'admitted';
    RETURN adm;
END;
$$;
