-- billing_worst_case_micro_dzd: its live definition. To change it: README.md in this directory.
--
-- Worst case = ceil((in × in_price + choices × min(max_out ?? cap, cap) × out_price) × tier /
-- 10^6): the same integer formula as admit.ts (costMicroDzd), on numeric.
CREATE OR REPLACE FUNCTION "billing_worst_case_micro_dzd"(
    input_tokens BIGINT, max_output_tokens BIGINT, choices INTEGER, model_cap INTEGER,
    input_price_micro_dzd_per_m BIGINT, output_price_micro_dzd_per_m BIGINT, priority BOOLEAN
) RETURNS NUMERIC
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
AS $$
    SELECT public.ledger_cost_micro_dzd(
        input_tokens,
        LEAST(COALESCE(max_output_tokens, model_cap), model_cap)::bigint * choices,
        input_price_micro_dzd_per_m, output_price_micro_dzd_per_m, priority)
$$;
