-- billing_admit_batch_v1: its live definition. To change it: README.md in this directory.
--
-- Admission of a batch of requests (one, or up to 256) in one call and one transaction, as
-- steps of one concern each over one state per item (the composite type `billing_admission`,
-- which is also the answer's row; one row per item, in the items' order): who is calling, the
-- requests windows, the model, the cost, the balance and a replay, the token's spending limit,
-- tokens per minute, budgets, the hold. The first step that decides an item's outcome ends it;
-- a refusal after the requests step has still counted the request. A new money rule changes
-- one step, or adds one here (the type gains its fields).
--
-- What every item needs is read and written for the batch, not per item (ADR 0073): one
-- statement reads all the items' keys, accounts, tokens, models and replayed holds (step 1
-- decides there), one upsert per account and minute counts the account's items in its requests
-- window (billing_admission_count_requests), and two statements place the holds and raise the
-- balances (billing_admission_place_holds). The items are admitted one after another in the
-- batch's order (by account, then by window, then as they came): an account's balance row is
-- locked when its first item comes, and each of its items is given what the earlier ones left,
-- so they draw on one balance exactly as they would one by one. The steps a request only
-- sometimes needs (a key's or token's own requests window, a scoped token's limit, tokens per
-- minute, budgets) read and write their own rows, item by item. Lock order: account by account
-- (in account order), its balance row, its requests window, then per item the key's and token's
-- windows, the token row, the tokens windows, the budget rows (balance → token → budgets is the
-- order of every path that ends a hold), so concurrent batches cannot deadlock.
-- Its settings are the admission's: the steps have none of their own (each would be saved and
-- restored on every call) and run with these: the search path; plans by key only (a young
-- database's statistics, a few rows per table, otherwise make a key's lookup a hash join over
-- every key and every account); and generic plans, planned once per session (for a batch of
-- one, a custom plan looks cheaper than the generic one and would be made on every call).
CREATE OR REPLACE FUNCTION "billing_admit_batch_v1"(items JSONB)
RETURNS SETOF billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    got RECORD;
    n INTEGER := 0;
    adms billing_admission[] := ARRAY[]::billing_admission[];
    ords BIGINT[] := ARRAY[]::bigint[];
    adm billing_admission;
    account_now TEXT;
    window_now BIGINT;
    window_count INTEGER;
    left_micro_dzd BIGINT;
    placed holds[] := ARRAY[]::holds[];
    placed_ids TEXT[] := ARRAY[]::text[];
    held_accounts TEXT[] := ARRAY[]::text[];
    held_micro_dzd BIGINT[] := ARRAY[]::bigint[];
    by_ord INTEGER[];
BEGIN
    IF jsonb_array_length(items) > 256 THEN
        RAISE EXCEPTION 'billing_admit_batch_v1: at most 256 items' USING ERRCODE = '22023';
    END IF;
    -- The reads: each item's request, its credential's rows (an API key by its digest, or a
    -- scoped token's signing key by id, account and digest; the account; the token's registry
    -- row), its model and a hold already placed under its id; and how many of its account's
    -- items step 1 lets through in its window.
    FOR got IN
        SELECT x.*, count(*) FILTER (WHERE (x.adm).outcome IS NULL)
                        OVER (PARTITION BY x.account_id, (x.r).window_start_ms) AS in_window
          FROM (SELECT e.ord, r, COALESCE(kd.account_id, r.account_id) AS account_id,
                       billing_admission_credential_v2(
                           r, CASE WHEN r.key_digest IS NOT NULL THEN kd ELSE ks END, ac, st)
                           AS adm,
                       m, h
                  FROM jsonb_array_elements(items) WITH ORDINALITY AS e(item, ord)
                 CROSS JOIN LATERAL
                       jsonb_populate_record(NULL::billing_admission_request, e.item) AS r
                  LEFT JOIN api_keys kd ON kd.key_digest = r.key_digest
                  LEFT JOIN api_keys ks
                         ON r.key_digest IS NULL AND ks.id = r.signing_key_id
                        AND ks.account_id = r.account_id AND ks.key_digest = r.signing_key_digest
                  LEFT JOIN accounts ac ON ac.id = COALESCE(kd.account_id, ks.account_id)
                  LEFT JOIN scoped_tokens st
                         ON r.key_digest IS NULL AND st.digest = r.token_digest
                  LEFT JOIN models m ON m.id = r.model
                  LEFT JOIN holds h ON h.id = r.hold_id
                OFFSET 0) x
         ORDER BY x.account_id, (x.r).window_start_ms, x.ord
    LOOP
        n := n + 1; ords[n] := got.ord; adm := got.adm;
        IF adm.outcome IS NULL THEN
            IF adm.account_id IS DISTINCT FROM account_now THEN
                SELECT b.posted_credits_micro_dzd - b.posted_debits_micro_dzd - b.pending_micro_dzd
                  INTO left_micro_dzd
                  FROM account_balances b WHERE b.account_id = adm.account_id FOR UPDATE;
            END IF;
            IF adm.account_id IS DISTINCT FROM account_now OR (got.r).window_start_ms <> window_now THEN
                account_now := adm.account_id; window_now := (got.r).window_start_ms;
                window_count := billing_admission_count_requests(account_now, window_now,
                                                                 got.in_window::integer)
                                - got.in_window::integer;
            END IF;
            window_count := window_count + 1;
            adm.window_count := window_count;
            adm := billing_admission_requests_v2(got.r, adm);
        END IF;
        IF adm.outcome IS NULL THEN adm := billing_admission_model_v2(got.r, adm, got.m); END IF;
        IF adm.outcome IS NULL THEN adm := billing_admission_cost(got.r, adm); END IF;
        IF adm.outcome IS NULL THEN
            IF (got.h).id IS NULL AND (got.r).hold_id = ANY (placed_ids) THEN
                -- The hold an earlier item of this batch placed under the same id.
                got.h := placed[array_position(placed_ids, (got.r).hold_id)];
            END IF;
            adm := billing_admission_balance_v2(got.r, adm, left_micro_dzd, got.h);
        END IF;
        IF adm.outcome IS NULL THEN adm := billing_admission_token_limit(got.r, adm); END IF;
        IF adm.outcome IS NULL THEN adm := billing_admission_tokens_per_minute(got.r, adm); END IF;
        IF adm.outcome IS NULL THEN adm := billing_admission_budgets(got.r, adm); END IF;
        IF adm.outcome IS NULL THEN adm := billing_admission_hold_v2(got.r, adm); END IF;
        adms[n] := adm;
        CONTINUE WHEN adm.outcome IS DISTINCT FROM 'admitted';
        left_micro_dzd := left_micro_dzd - adm.hold_amount_micro_dzd;
        placed := placed || billing_admission_hold_row(got.r, adm);
        placed_ids := placed_ids || (got.r).hold_id;
        IF held_accounts[cardinality(held_accounts)] IS DISTINCT FROM account_now THEN
            held_accounts := held_accounts || account_now;
            held_micro_dzd := held_micro_dzd || 0::bigint;
        END IF;
        held_micro_dzd[cardinality(held_micro_dzd)] :=
            held_micro_dzd[cardinality(held_micro_dzd)] + adm.hold_amount_micro_dzd;
    END LOOP;
    IF cardinality(placed) > 0 THEN
        PERFORM billing_admission_place_holds(placed, held_accounts, held_micro_dzd);
    END IF;
    -- The answers in the items' order.
    FOR k IN 1 .. n LOOP by_ord[ords[k]] := k; END LOOP;
    FOR k IN 1 .. n LOOP RETURN NEXT adms[by_ord[k]]; END LOOP;
END;
$$;
