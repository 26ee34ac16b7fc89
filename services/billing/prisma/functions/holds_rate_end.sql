-- holds_rate_end: its live definition. To change it: README.md in this directory.
--
-- When a hold counted against tokens-per-minute windows ends, the tokens it
-- did not use go back to those windows: all of them for a hold that charged nothing (voided,
-- expired), the reservation less the reported prompt and completion tokens for a settled one.
-- A deferred constraint trigger, run at commit, when the settlement's usage record already
-- holds the reported tokens (usage_settle_holds). It inserts returns instead of updating the
-- window rows, which admissions lock: a hold ending never waits for one. A window more than a
-- minute over gets nothing (nobody is counted against it any more).
-- SECURITY DEFINER: a deferred trigger runs at commit, as the session's role, after the
-- function that ended the hold returned; the worker's and edge's function-only roles (ADR 0070)
-- have no right on the tokens windows. A trigger function cannot be called directly.
CREATE OR REPLACE FUNCTION "holds_rate_end"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    used BIGINT := 0;
BEGIN
    IF OLD.status <> 'pending' OR NEW.status = 'pending'
       OR NEW.rate_window_start_ms < (extract(epoch FROM now()) * 1000)::bigint - 120000 THEN
        RETURN NULL;
    END IF;
    IF NEW.status = 'settled' THEN
        SELECT u.prompt_tokens + u.completion_tokens INTO used
          FROM usage_records u WHERE u.hold_id = NEW.id;
        used := COALESCE(used, NEW.rate_tokens);
    END IF;
    IF used < NEW.rate_tokens THEN
        INSERT INTO key_token_returns (owner_id, window_start_ms, hold_id, tokens)
        SELECT o, NEW.rate_window_start_ms, NEW.id, NEW.rate_tokens - used
          FROM unnest(ARRAY[NEW.rate_key_id, NEW.rate_token_id]) AS o
         WHERE o IS NOT NULL
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;
