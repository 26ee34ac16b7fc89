-- billing_count_key_request: its live definition. To change it: README.md in this directory.
--
-- Counts one request in an API key's or a scoped token's own one-minute window and returns
-- the window's count. The owner's older windows go when its first request of a
-- new window arrives, so an active owner has at most two rows (quiet ones: the prune job).
CREATE OR REPLACE FUNCTION "billing_count_key_request"(
    p_owner_id TEXT, p_window_start_ms BIGINT
) RETURNS INTEGER
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    n INTEGER;
BEGIN
    INSERT INTO key_request_windows AS w (owner_id, window_start_ms, count)
    VALUES (p_owner_id, p_window_start_ms, 1)
    ON CONFLICT (owner_id, window_start_ms) DO UPDATE SET count = w.count + 1
    RETURNING w.count INTO n;
    IF n = 1 THEN
        DELETE FROM key_request_windows w
         WHERE w.owner_id = p_owner_id AND w.window_start_ms < p_window_start_ms;
    END IF;
    RETURN n;
END;
$$;
