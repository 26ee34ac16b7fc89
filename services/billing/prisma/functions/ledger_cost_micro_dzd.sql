-- ledger_cost_micro_dzd: its live definition. To change it: README.md in this directory.
--
-- Cost in µDZD = ceil((in × in_price + out × out_price) × tier / 10^6), tier 1 or 12/10: the
-- same exact integer arithmetic as costMicroDzd (@gateway/contracts), on numeric (no overflow,
-- no rounding: div() truncates an exact quotient).
CREATE OR REPLACE FUNCTION "ledger_cost_micro_dzd"(
    input_tokens BIGINT, output_tokens BIGINT,
    input_price_micro_dzd_per_m BIGINT, output_price_micro_dzd_per_m BIGINT, priority BOOLEAN
) RETURNS NUMERIC
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SECURITY INVOKER
AS $$
    SELECT div(
        (input_tokens::numeric * input_price_micro_dzd_per_m
            + output_tokens::numeric * output_price_micro_dzd_per_m)
            * CASE WHEN priority THEN 12 ELSE 1 END
            + CASE WHEN priority THEN 10000000 ELSE 1000000 END - 1,
        CASE WHEN priority THEN 10000000 ELSE 1000000 END)
$$;
