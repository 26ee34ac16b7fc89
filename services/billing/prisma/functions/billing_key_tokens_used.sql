-- billing_key_tokens_used: its live definition. To change it: README.md in this directory.
--
-- The tokens an API key or a scoped token used in a one-minute window: what
-- admissions counted there, less what ended holds gave back (key_token_returns). Creates the
-- window's row when it has none (and drops the owner's older windows and returns), then locks
-- it, so the caller's check and its count later in the same transaction cannot interleave with
-- another admission's. Returns are only ever inserted (never an update of the locked row), so a
-- hold ending never waits for an admission; one not committed yet is simply not subtracted.
-- Under the row's lock the committed returns are folded into it (deleted, their sum taken off
-- the row), so each return is read once: summing all of them on every admission made a busy
-- key's admission cost grow with its requests in the minute (0.48 ms at about 150 a second).
CREATE OR REPLACE FUNCTION "billing_key_tokens_used"(
    p_owner_id TEXT, p_window_start_ms BIGINT
) RETURNS BIGINT
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    used BIGINT;
    returned BIGINT;
BEGIN
    INSERT INTO key_token_windows (owner_id, window_start_ms, tokens)
    VALUES (p_owner_id, p_window_start_ms, 0)
    ON CONFLICT (owner_id, window_start_ms) DO NOTHING;
    IF FOUND THEN
        DELETE FROM key_token_windows w
         WHERE w.owner_id = p_owner_id AND w.window_start_ms < p_window_start_ms;
        DELETE FROM key_token_returns r
         WHERE r.owner_id = p_owner_id AND r.window_start_ms < p_window_start_ms;
    END IF;
    SELECT w.tokens INTO used FROM key_token_windows w
     WHERE w.owner_id = p_owner_id AND w.window_start_ms = p_window_start_ms FOR UPDATE;
    WITH folded AS (
        DELETE FROM key_token_returns r
         WHERE r.owner_id = p_owner_id AND r.window_start_ms = p_window_start_ms
        RETURNING r.tokens
    )
    SELECT COALESCE(sum(f.tokens), 0) INTO returned FROM folded f;
    IF returned > 0 THEN
        UPDATE key_token_windows w SET tokens = w.tokens - returned
         WHERE w.owner_id = p_owner_id AND w.window_start_ms = p_window_start_ms;
    END IF;
    RETURN used - returned;
END;
$$;
