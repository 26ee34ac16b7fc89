-- billing_admission_requests_v2: its live definition. To change it: README.md in this directory.
--
-- Admission, step 2 (billing_admit_batch_v1): the request counted (and committed, whatever
-- follows) in the account's one-minute window, by the batch for all the account's items at once
-- (billing_admission_count_requests: `window_count` is the count as of this item), and in the
-- key's and the token's own when they have a requests-per-minute limit; refused when any of
-- them is over.
CREATE OR REPLACE FUNCTION "billing_admission_requests_v2"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
BEGIN
    IF adm.key_requests_per_minute IS NOT NULL THEN
        adm.key_window_count := billing_count_key_request(adm.key_id, r.window_start_ms);
    END IF;
    IF adm.token_requests_per_minute IS NOT NULL THEN
        adm.token_window_count := billing_count_key_request(adm.token_id, r.window_start_ms);
    END IF;
    IF adm.window_count > adm.rate_limit_per_minute
       OR adm.key_window_count > adm.key_requests_per_minute
       OR adm.token_window_count > adm.token_requests_per_minute THEN
        adm.outcome := 'rate_limit_exceeded';
    END IF;
    RETURN adm;
END;
$$;
