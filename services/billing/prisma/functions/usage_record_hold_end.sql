-- usage_record_hold_end: its live definition. To change it: README.md in this directory.
--
-- The record, from the hold as it ends without a settlement (trigger `holds_usage_record`, migration
-- 20270128090000): a settled hold's record is written by `usage_settle_holds`, once, with the
-- worker's report. Outcome: voided → failed (the void wrapper says cancelled or refused when the
-- caller knows); expired → refused when the job was never published (never queued), failed
-- otherwise. Cost 0: nothing was charged.
CREATE OR REPLACE FUNCTION "usage_record_hold_end"() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
BEGIN
    INSERT INTO usage_records (hold_id, request_id, account_id, api_key_name, scoped_token_id,
                               endpoint, model, priority, hold_status, outcome, cost_micro_dzd,
                               created_at, ended_at)
    VALUES (NEW.id, NEW.request_id, NEW.account_id, NEW.api_key_name, NEW.scoped_token_id,
            NEW.endpoint, NEW.model, NEW.priority, NEW.status::text,
            CASE WHEN NEW.status = 'expired' AND NEW.published_at IS NULL THEN 'refused'
                 ELSE 'failed' END,
            0, NEW.created_at,
            COALESCE(NEW.finalized_at, now()));
    RETURN NULL;
END;
$$;
