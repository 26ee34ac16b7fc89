-- billing_admission_count_requests: its live definition. To change it: README.md in this directory.
--
-- Counts a batch's requests of one account in its one-minute window (billing_admit_batch_v1,
-- for step 2: every item that passed step 1 counts, committed whatever follows) with one
-- upsert, and returns the window's count after them: each item's count as of it is that less
-- the requests after it. A window the batch opened drops the account's older ones.
CREATE OR REPLACE FUNCTION "billing_admission_count_requests"(
    p_account_id TEXT, p_window_start_ms BIGINT, p_requests INTEGER
) RETURNS INTEGER
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    n INTEGER;
BEGIN
    INSERT INTO rate_limit_windows AS w (account_id, window_start_ms, count)
    VALUES (p_account_id, p_window_start_ms, p_requests)
    ON CONFLICT ON CONSTRAINT rate_limit_windows_pkey DO UPDATE SET count = w.count + p_requests
    RETURNING w.count INTO n;
    IF n = p_requests THEN
        DELETE FROM rate_limit_windows w
         WHERE w.account_id = p_account_id AND w.window_start_ms < p_window_start_ms;
    END IF;
    RETURN n;
END;
$$;
