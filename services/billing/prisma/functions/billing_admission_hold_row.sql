-- billing_admission_hold_row: its live definition. To change it: README.md in this directory.
--
-- The hold an item admitted by step 9 places (billing_admit_batch_v1 collects them for
-- billing_admission_place_holds): at the model's prices, with the reservations step 9 decided
-- (its budgets; its tokens, for holds_rate_end to give back what goes unused, with the key's
-- and the token's windows it counted in), the request's endpoint and id and the key's name (the
-- signing key's for a scoped token), which its usage record copies.
CREATE OR REPLACE FUNCTION "billing_admission_hold_row"(
    r billing_admission_request, adm billing_admission
) RETURNS holds
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    h holds;
BEGIN
    h.id := adm.hold_id; h.account_id := adm.account_id; h.scoped_token_id := adm.token_id;
    h.amount_micro_dzd := adm.hold_amount_micro_dzd; h.status := 'pending';
    h.model := adm.model_id; h.priority := r.priority;
    h.input_price_micro_dzd_per_m := adm.model_input_price;
    h.output_price_micro_dzd_per_m := adm.model_output_price;
    h.expires_at := adm.hold_expires_at; h.created_at := adm.hold_created_at;
    h.key_budget_id := adm.key_budget_id; h.token_budget_id := adm.token_budget_id;
    IF adm.key_tokens_used IS NOT NULL OR adm.token_tokens_used IS NOT NULL THEN
        h.rate_tokens := adm.rate_tokens; h.rate_window_start_ms := r.window_start_ms;
        h.rate_key_id := CASE WHEN adm.key_tokens_used IS NOT NULL THEN adm.key_id END;
        h.rate_token_id := CASE WHEN adm.token_tokens_used IS NOT NULL THEN adm.token_id END;
    END IF;
    h.endpoint := r.endpoint; h.request_id := r.request_id; h.api_key_name := adm.api_key_name;
    RETURN h;
END;
$$;
