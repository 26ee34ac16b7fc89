-- Admission set-based per batch (ADR 0073; prisma/functions/billing_admit_batch_v1.sql): the
-- batch reads its items' rows in one statement, counts each account's requests window in one
-- upsert (billing_admission_count_requests) and places the holds (each made by
-- billing_admission_hold_row) and raises the balances in two (billing_admission_place_holds).
-- The steps that read or wrote those rows themselves now decide from what the batch read, under
-- new names (their signatures or meanings changed): billing_admission_credential_v2,
-- _requests_v2, _model_v2, _balance_v2, _hold_v2. The functions are new; they are created here
-- only so that PUBLIC loses EXECUTE on them, as on every function of this database. Their bodies
-- are their files', which the migrator applies right after the migrations, in one transaction
-- with the new billing_admit_batch_v1 that calls them.
--
-- billing_admit_v5 and the steps it calls are kept for one release (prisma/functions/README.md,
-- "Versions during a rolling update"): until the sources are applied, billing_admit_batch_v1 is
-- still the previous release's, which calls them.
CREATE FUNCTION "billing_admission_credential_v2"(
    r billing_admission_request, k api_keys, ac accounts, t scoped_tokens
) RETURNS billing_admission LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END; $$;
CREATE FUNCTION "billing_admission_requests_v2"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END; $$;
CREATE FUNCTION "billing_admission_model_v2"(
    r billing_admission_request, adm billing_admission, m models
) RETURNS billing_admission LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END; $$;
CREATE FUNCTION "billing_admission_balance_v2"(
    r billing_admission_request, adm billing_admission, available_micro_dzd BIGINT, h holds
) RETURNS billing_admission LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END; $$;
CREATE FUNCTION "billing_admission_hold_v2"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END; $$;
CREATE FUNCTION "billing_admission_count_requests"(
    p_account_id TEXT, p_window_start_ms BIGINT, p_requests INTEGER
) RETURNS INTEGER LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END; $$;
CREATE FUNCTION "billing_admission_hold_row"(
    r billing_admission_request, adm billing_admission
) RETURNS holds LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END; $$;
CREATE FUNCTION "billing_admission_place_holds"(
    placed holds[], accounts TEXT[], amounts BIGINT[]
) RETURNS INTEGER LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END; $$;
REVOKE ALL ON FUNCTION "billing_admission_credential_v2"(
    billing_admission_request, api_keys, accounts, scoped_tokens) FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_requests_v2"(billing_admission_request, billing_admission)
    FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_model_v2"(billing_admission_request, billing_admission, models)
    FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_balance_v2"(
    billing_admission_request, billing_admission, BIGINT, holds) FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_hold_v2"(billing_admission_request, billing_admission)
    FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_count_requests"(TEXT, BIGINT, INTEGER) FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_hold_row"(billing_admission_request, billing_admission)
    FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_place_holds"(holds[], TEXT[], BIGINT[]) FROM PUBLIC;
