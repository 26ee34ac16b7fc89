-- billing_admission_tokens_per_minute: its live definition. To change it: README.md in this directory.
--
-- Admission, step 7 (billing_admit_batch_v1): the request's tokens must fit in the key's and the
-- token's one-minute tokens windows, when they have a limit; the windows' rows stay locked
-- until commit, and the hold counts its tokens there (step 9). After the replay check, so a
-- retried admission is answered, never counted twice.
CREATE OR REPLACE FUNCTION "billing_admission_tokens_per_minute"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
BEGIN
    IF adm.key_tokens_per_minute IS NOT NULL THEN
        adm.key_tokens_used := billing_key_tokens_used(adm.key_id, r.window_start_ms);
    END IF;
    IF adm.token_tokens_per_minute IS NOT NULL THEN
        adm.token_tokens_used := billing_key_tokens_used(adm.token_id, r.window_start_ms);
    END IF;
    IF adm.key_tokens_used + adm.rate_tokens > adm.key_tokens_per_minute
       OR adm.token_tokens_used + adm.rate_tokens > adm.token_tokens_per_minute THEN
        adm.outcome := 'rate_limit_exceeded';
    END IF;
    RETURN adm;
END;
$$;
