-- holds_admission_context: its live definition. To change it: README.md in this directory.
--
-- The request's context on the hold admission inserts: the wrapper below passes it in a
-- transaction-local setting, read by this trigger as the row is inserted (no second write of the
-- hold). Only the hold named in the setting is touched: never a replayed hold or another
-- account's (those are not inserted), never a hold placed by another path (no setting).
-- Only `billing_admit_v4` and `billing_admit_with_context_v4` (the previous release) set it:
-- v5's hold step writes these columns itself. It goes with them (README.md, "Versions during a
-- rolling update").
CREATE OR REPLACE FUNCTION "holds_admission_context"() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    raw TEXT := current_setting('billing.admission_context', true);
    ctx JSON;
BEGIN
    IF raw IS NULL OR raw = '' THEN RETURN NEW; END IF;
    ctx := raw::json;
    IF ctx->>'hold_id' IS DISTINCT FROM NEW.id THEN RETURN NEW; END IF;
    NEW.endpoint := ctx->>'endpoint';
    NEW.request_id := ctx->>'request_id';
    -- The API key's name, or the name of the key that signed the scoped token (unique indexes).
    NEW.api_key_name := COALESCE(
        (SELECT k.name FROM api_keys k WHERE k.key_digest = ctx->>'key_digest'),
        (SELECT k.name FROM api_keys k WHERE k.id = ctx->>'signing_key_id'));
    RETURN NEW;
END;
$$;
