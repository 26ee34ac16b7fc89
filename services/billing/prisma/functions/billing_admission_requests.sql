-- billing_admission_requests: its live definition. To change it: README.md in this directory.
--
-- Admission, step 2 (billing_admit_v5): the request counted (and committed, whatever follows)
-- in the account's one-minute window, and in the key's and the token's own when they have a
-- requests-per-minute limit; refused when any of them is over. Windows before this one are
-- pruned when it opens.
CREATE OR REPLACE FUNCTION "billing_admission_requests"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
BEGIN
    INSERT INTO rate_limit_windows AS w (account_id, window_start_ms, count)
    VALUES (adm.account_id, r.window_start_ms, 1)
    ON CONFLICT ON CONSTRAINT rate_limit_windows_pkey DO UPDATE SET count = w.count + 1
    RETURNING w.count INTO adm.window_count;
    IF adm.window_count = 1 THEN
        DELETE FROM rate_limit_windows w
         WHERE w.account_id = adm.account_id AND w.window_start_ms < r.window_start_ms;
    END IF;
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
