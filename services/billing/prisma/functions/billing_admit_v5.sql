-- billing_admit_v5: its live definition. To change it: README.md in this directory.
-- Kept for one release, with the steps it calls that have a _v2 (README.md, "Versions during a
-- rolling update"): the previous release's billing_admit_batch_v1 calls it. Dropped next release.
--
-- Admission of one request, as steps of one concern each over one state (the composite type
-- `billing_admission`, which is also the answer's row): who is calling, the requests windows,
-- the model, the cost, the balance row and a replay, the token's spending limit, tokens per
-- minute, budgets, the hold. The first step that decides an outcome ends it; a refusal after
-- the requests step has still counted the request. The hold step writes the request's context
-- (endpoint, request id, key name) on the hold itself, for its usage record.
-- A new money rule changes one step, or adds one here (the type gains its fields).
-- Neither it nor its steps have settings of their own: a function's settings are saved and
-- restored on every call (about 15 % of an admission's time in PostgreSQL, measured, for the
-- steps'). They run with those of billing_admit_batch_v1, the one function that calls this one.
CREATE OR REPLACE FUNCTION "billing_admit_v5"(r billing_admission_request)
RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    adm billing_admission;
BEGIN
    adm := billing_admission_credential(r);
    IF adm.outcome IS NULL THEN adm := billing_admission_requests(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_model(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_cost(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_balance(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_token_limit(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_tokens_per_minute(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_budgets(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_hold(r, adm); END IF;
    RETURN adm;
END;
$$;
