-- The dispatcher's own schema: signing secrets, deliveries (with the sealed result until it is
-- purged) and the attempt log (metadata only, kept after the purge for inspection).

CREATE TABLE webhook_secrets (
    id                text PRIMARY KEY,
    account_id        text NOT NULL,
    -- AES-256-GCM of the `whsec_...` string; AAD = "<account_id>:<id>".
    secret_ciphertext bytea NOT NULL,
    secret_nonce      bytea NOT NULL,
    secret_tag        bytea NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- NULL while current; set to rotation time + window when a newer secret replaces it.
    expires_at        timestamptz
);
CREATE INDEX webhook_secrets_account ON webhook_secrets (account_id, created_at);

CREATE TABLE webhook_deliveries (
    id                  text PRIMARY KEY,
    -- One delivery per job: a redelivered completion event finds its job here and stops.
    job_id              text NOT NULL UNIQUE,
    account_id          text NOT NULL,
    format              text NOT NULL CHECK (format IN ('A', 'B')),
    status              text NOT NULL
                        CHECK (status IN ('queued', 'retrying', 'delivered', 'failed', 'dropped')),
    -- AES-256-GCM of {"url","body"}; AAD = "<account_id>:<id>". NULL once purged.
    payload_ciphertext  bytea,
    payload_nonce       bytea,
    payload_tag         bytea,
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    purge_at            timestamptz NOT NULL,
    payload_purged_at   timestamptz,
    -- NULL when no attempt is scheduled (delivered, failed, dropped).
    next_attempt_at     timestamptz,
    -- A claimed delivery is not due again until its lease ends (a dead dispatcher's claim lapses).
    lease_id            uuid,
    leased_until        timestamptz,
    attempt_count       integer NOT NULL DEFAULT 0,
    -- Attempts since the delivery was (re)queued: indexes the retry schedule.
    round_attempt_count integer NOT NULL DEFAULT 0,
    updated_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK ((status IN ('queued', 'retrying')) = (next_attempt_at IS NOT NULL))
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE next_attempt_at IS NOT NULL;
CREATE INDEX webhook_deliveries_account ON webhook_deliveries (account_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_purge ON webhook_deliveries (purge_at)
    WHERE payload_ciphertext IS NOT NULL;

CREATE TABLE webhook_attempts (
    delivery_id  text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt      integer NOT NULL CHECK (attempt >= 1),
    started_at   timestamptz NOT NULL,
    status_code  integer,
    latency_ms   integer NOT NULL CHECK (latency_ms >= 0),
    outcome      text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed', 'dropped')),
    error        text,
    PRIMARY KEY (delivery_id, attempt)
);
