-- billing_key_tokens_used: its live definition. To change it: README.md in this directory.
--
-- The tokens an API key or a scoped token used in a one-minute window: what
-- admissions counted there, less what ended holds gave back (key_token_returns). Creates the
-- window's row when it has none (and then drops the owner's older windows and returns), or
-- locks it, so the caller's check and its count later in the same transaction cannot
-- interleave with another admission's. Returns are only ever inserted (never an update of the
-- locked row), so a hold ending never waits for an admission; one not committed yet is simply
-- not subtracted. Under the row's lock the committed returns are folded into it (deleted,
-- their sum taken off the row), so each return is read once: summing all of them on every
-- admission made a busy key's admission cost grow with its requests in the minute (0.48 ms at
-- about 150 a second).
--
-- One statement does the creation, the lock and the fold (it was four: 2026-12-01). The
-- returns' DELETE is read by the conflict's SET, which PostgreSQL evaluates after it has locked
-- the row: window row, then returns, the order every admission takes them in. A row it creates
-- starts at 0 and takes no returns: a window's returns exist only for tokens counted in its
-- row, and a window created again (an older clock, after a newer window dropped it) starts
-- with nothing counted, so its stale returns are dropped with nothing to take them off.
-- `xmax = 0` tells the inserted row from the updated one; taken wrongly, it only runs or skips
-- the cleanup of older windows, which the next new window does anyway.
CREATE OR REPLACE FUNCTION "billing_key_tokens_used"(
    p_owner_id TEXT, p_window_start_ms BIGINT
) RETURNS BIGINT
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    used BIGINT;
    created BOOLEAN;
BEGIN
    WITH folded AS (
        DELETE FROM key_token_returns r
         WHERE r.owner_id = p_owner_id AND r.window_start_ms = p_window_start_ms
        RETURNING r.tokens
    )
    INSERT INTO key_token_windows AS w (owner_id, window_start_ms, tokens)
    VALUES (p_owner_id, p_window_start_ms, 0)
    ON CONFLICT (owner_id, window_start_ms) DO UPDATE
       SET tokens = w.tokens - (SELECT COALESCE(sum(f.tokens), 0) FROM folded f)
    RETURNING w.tokens, w.xmax = 0 INTO used, created;
    IF created THEN
        DELETE FROM key_token_windows w
         WHERE w.owner_id = p_owner_id AND w.window_start_ms < p_window_start_ms;
        DELETE FROM key_token_returns r
         WHERE r.owner_id = p_owner_id AND r.window_start_ms < p_window_start_ms;
    END IF;
    RETURN used;
END;
$$;
