-- billing_admission_place_holds: its live definition. To change it: README.md in this directory.
--
-- The writes of a batch of admissions (billing_admit_batch_v1) that every admitted item makes,
-- set-based: the holds of the items step 9 admitted (each made by billing_admission_hold_row),
-- and each account's pending amount raised by what its holds reserve (`accounts`, `amounts`).
-- The balance rows are the batch's, locked before step 2. Returns the number of holds placed.
CREATE OR REPLACE FUNCTION "billing_admission_place_holds"(
    placed holds[], accounts TEXT[], amounts BIGINT[]
) RETURNS INTEGER
LANGUAGE plpgsql SECURITY INVOKER
AS $$
BEGIN
    INSERT INTO holds (id, account_id, scoped_token_id, amount_micro_dzd, status, model,
                       input_price_micro_dzd_per_m, output_price_micro_dzd_per_m, priority,
                       expires_at, created_at, key_budget_id, token_budget_id, rate_tokens,
                       rate_window_start_ms, rate_key_id, rate_token_id, endpoint, request_id,
                       api_key_name)
    SELECT h.id, h.account_id, h.scoped_token_id, h.amount_micro_dzd, h.status, h.model,
           h.input_price_micro_dzd_per_m, h.output_price_micro_dzd_per_m, h.priority,
           h.expires_at, h.created_at, h.key_budget_id, h.token_budget_id, h.rate_tokens,
           h.rate_window_start_ms, h.rate_key_id, h.rate_token_id, h.endpoint, h.request_id,
           h.api_key_name
      FROM unnest(placed) AS h;
    UPDATE account_balances b
       SET pending_micro_dzd = b.pending_micro_dzd + u.amount, updated_at = now()
      FROM unnest(accounts, amounts) AS u(account_id, amount)
     WHERE b.account_id = u.account_id;
    RETURN cardinality(placed);
END;
$$;
