-- billing_admission_cost: its live definition. To change it: README.md in this directory.
--
-- Admission, step 4 (billing_admit_batch_v1): the worst case, at the prices the hold will snapshot
-- (every image counts the model's per-image ceiling as input), and the request's tokens as the
-- tokens-per-minute windows count them: the prompt, its images' ceiling and the output cap × n,
-- what the hold is sized for. Refuses nothing.
CREATE OR REPLACE FUNCTION "billing_admission_cost"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    input_tokens BIGINT := r.input_tokens + COALESCE(r.image_count, 0)::bigint * adm.model_image_tokens;
BEGIN
    adm.reserved_output_tokens := LEAST(COALESCE(r.max_output_tokens, adm.model_max_output_tokens),
                                        adm.model_max_output_tokens) * r.choices;
    adm.worst_case_micro_dzd := billing_worst_case_micro_dzd(
        input_tokens, r.max_output_tokens, r.choices, adm.model_max_output_tokens,
        adm.model_input_price, adm.model_output_price, r.priority)::bigint;
    adm.rate_tokens := input_tokens + adm.reserved_output_tokens;
    RETURN adm;
END;
$$;
