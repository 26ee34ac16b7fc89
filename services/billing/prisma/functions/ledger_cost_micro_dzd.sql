-- ledger_cost_micro_dzd: its live definition. To change it: README.md in this directory.
--
-- Cost in µDZD = ceil((in × in_price + out × out_price) × tier / 10^6), tier 1 or 12/10: the
-- same exact integer arithmetic as costMicroDzd (@gateway/contracts), on numeric (no overflow,
-- no rounding: div() truncates an exact quotient).
-- Not declared STRICT, so that the planner inlines it into its callers' expressions (a STRICT
-- SQL function whose body is not strict is run as a function: its body parsed and planned
-- again in every transaction, about 0.05 ms per call). It is strict all the same: any NULL
-- argument makes the result NULL (a NULL priority matches no WHEN).
CREATE OR REPLACE FUNCTION "ledger_cost_micro_dzd"(
    input_tokens BIGINT, output_tokens BIGINT,
    input_price_micro_dzd_per_m BIGINT, output_price_micro_dzd_per_m BIGINT, priority BOOLEAN
) RETURNS NUMERIC
LANGUAGE sql IMMUTABLE PARALLEL SAFE SECURITY INVOKER
AS $$
    SELECT div(
        (input_tokens::numeric * input_price_micro_dzd_per_m
            + output_tokens::numeric * output_price_micro_dzd_per_m)
            * CASE WHEN priority THEN 12 WHEN NOT priority THEN 1 END
            + CASE WHEN priority THEN 10000000 WHEN NOT priority THEN 1000000 END - 1,
        CASE WHEN priority THEN 10000000 WHEN NOT priority THEN 1000000 END)
$$;
