-- usage_record_hold_end: its live definition. To change it: README.md in this directory.
--
-- The record, from the hold as it ends. Outcome: settled → succeeded (the settle wrapper turns a
-- cancellation into cancelled); voided → failed (the void wrapper says cancelled or refused when
-- the caller knows); expired → refused when the job was never published (never queued), failed
-- otherwise.
CREATE OR REPLACE FUNCTION "usage_record_hold_end"() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
BEGIN
    INSERT INTO usage_records (hold_id, request_id, account_id, api_key_name, scoped_token_id,
                               endpoint, model, priority, hold_status, outcome, cost_micro_dzd,
                               created_at, ended_at)
    VALUES (NEW.id, NEW.request_id, NEW.account_id, NEW.api_key_name, NEW.scoped_token_id,
            NEW.endpoint, NEW.model, NEW.priority, NEW.status::text,
            CASE WHEN NEW.status = 'settled' THEN 'succeeded'
                 WHEN NEW.status = 'expired' AND NEW.published_at IS NULL THEN 'refused'
                 ELSE 'failed' END,
            COALESCE(NEW.settled_amount_micro_dzd, 0), NEW.created_at,
            COALESCE(NEW.finalized_at, now()));
    RETURN NULL;
END;
$$;
