-- billing_admit_v5: its live definition. To change it: README.md in this directory.
--
-- Admission of one request, as steps of one concern each over one state (the composite type
-- `billing_admission`, which is also the answer's row): who is calling, the requests windows,
-- the model, the cost, the balance row and a replay, the token's spending limit, tokens per
-- minute, budgets, the hold. The first step that decides an outcome ends it; a refusal after
-- the requests step has still counted the request. The hold step writes the request's context
-- (endpoint, request id, key name) on the hold itself, for its usage record.
-- A new money rule changes one step, or adds one here (the type gains its fields).
-- The steps have no settings of their own: each would cost a save and restore of the
-- session's settings on every call (about 15 % of an admission's time in PostgreSQL,
-- measured). They run with these: the search path, and plans by key only (a young database's
-- statistics, a few rows per table, otherwise make the key's lookup a hash join over every
-- account).
CREATE OR REPLACE FUNCTION "billing_admit_v5"(r billing_admission_request)
RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
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
