-- Issue 32: a background response's end is delivered by the same machinery (`response.*`, its
-- `job_id` the response id: one delivery per response).
-- NOT VALID: existing rows passed the narrower check, so they pass this one; no table scan
-- under the lock. New and updated rows are checked.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_type_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_type_check
    CHECK (event_type IN ('inference.completed', 'balance.low', 'budget.threshold',
                          'balance.exhaustion_projected', 'response.completed',
                          'response.incomplete', 'response.failed', 'response.cancelled'))
    NOT VALID;
