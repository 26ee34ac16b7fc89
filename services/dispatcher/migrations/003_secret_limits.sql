-- Issue 22 item 4: at most two active signing secrets per account (the current one and one
-- previous one in its rotation window), and a rotation rate limit per account.

-- Rotations of the last hour, for the per-account limit (SECRET_ROTATIONS_PER_HOUR). No key
-- material: an account id and a time. Rows older than the hour are purged by the dispatch tick.
CREATE TABLE webhook_secret_rotations (
    account_id text NOT NULL,
    rotated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_secret_rotations_account ON webhook_secret_rotations (account_id, rotated_at);

-- Existing data: before this release every rotation kept all previous secrets signing for 24 h,
-- so an account could have any number of active secrets (one `v1` each on every delivery).
-- Keep the newest two active ones of each account, i.e. the current secret (which every receiver
-- that switched verifies with) and the newest previous one, with its window unchanged; the older
-- ones stop signing now and their sealed key material is deleted. Expired rows are left to the
-- tick's purge, as before.
DELETE FROM webhook_secrets AS s
 USING (SELECT id,
               row_number() OVER (PARTITION BY account_id ORDER BY created_at DESC, id DESC) AS rank
          FROM webhook_secrets
         WHERE expires_at IS NULL OR expires_at > clock_timestamp()) AS ranked
 WHERE s.id = ranked.id
   AND ranked.rank > 2;
