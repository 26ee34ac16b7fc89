-- billing_admit_v5: its live definition. To change it: README.md in this directory.
--
-- Admission of one request, as steps of one concern each over one state (the composite type
-- `billing_admission`, which is also the answer's row): who is calling, the requests windows,
-- the model, the cost, the balance row and a replay, the token's spending limit, tokens per
-- minute, budgets, the hold. The first step that decides an outcome ends it; a refusal after
-- the requests step has still counted the request. The request's context (endpoint, request
-- id, key) is set for the hold's usage record (holds_admission_context) for this call only.
-- A new money rule changes one step, or adds one here (the type gains its fields).
CREATE OR REPLACE FUNCTION "billing_admit_v5"(r billing_admission_request)
RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    adm billing_admission;
BEGIN
    PERFORM set_config('billing.admission_context',
                       json_build_object('hold_id', r.hold_id, 'endpoint', r.endpoint,
                                         'request_id', r.request_id, 'key_digest', r.key_digest,
                                         'signing_key_id', r.signing_key_id)::text,
                       true);
    adm := billing_admission_credential(r);
    IF adm.outcome IS NULL THEN adm := billing_admission_requests(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_model(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_cost(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_balance(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_token_limit(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_tokens_per_minute(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_budgets(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_hold(r, adm); END IF;
    PERFORM set_config('billing.admission_context', '', true);
    RETURN adm;
END;
$$;
