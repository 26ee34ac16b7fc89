-- Issue 25 item 3: account alerts are delivered by the same machinery as job results. A
-- delivery now says what it carries: `inference.completed` (a job's result, as before) or the
-- alert's type. For an alert, `job_id` holds the alert's event id (deterministic, made by
-- billing): its UNIQUE constraint makes the intake idempotent per alert, as it is per job.
ALTER TABLE webhook_deliveries
    ADD COLUMN event_type text NOT NULL DEFAULT 'inference.completed'
    CHECK (event_type IN ('inference.completed', 'balance.low', 'budget.threshold',
                          'balance.exhaustion_projected'));
