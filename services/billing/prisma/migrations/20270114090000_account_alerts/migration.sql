-- Issue 25 item 3: account alerts as signed webhooks.
--
-- `alert_settings`: one row per account that configured alerts. The endpoint URL is sealed with
-- MASTER_KEY (AAD "<account_id>:alerts"): a URL can carry a token. `balance_low_episode` counts
-- the balance's returns above its threshold: the balance alert's window (it re-arms when a credit
-- lifts the balance back above the threshold). `evaluated_at` spreads the evaluation over ticks.
--
-- `alert_events`: the outbox. One row per alert, its id a hash of (account, type, scope,
-- threshold, window), inserted ON CONFLICT DO NOTHING: however many replicas evaluate, each alert
-- exists once; `published_at` is set once the broker confirmed the event.

CREATE TABLE "alert_settings" (
    "account_id" TEXT PRIMARY KEY REFERENCES "accounts"("id") ON DELETE RESTRICT,
    "url_ciphertext" BYTEA NOT NULL,
    "url_nonce" BYTEA NOT NULL,
    "url_tag" BYTEA NOT NULL,
    "url_key_version" INTEGER NOT NULL CHECK ("url_key_version" > 0),
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "balance_below_micro_dzd" BIGINT CHECK ("balance_below_micro_dzd" > 0),
    "budget_thresholds_percent" INTEGER[] NOT NULL DEFAULT '{50,80,100}',
    "exhaustion_hours" INTEGER CHECK ("exhaustion_hours" BETWEEN 1 AND 720),
    "balance_low_episode" INTEGER NOT NULL DEFAULT 0,
    "evaluated_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "alert_settings_thresholds" CHECK (
        cardinality("budget_thresholds_percent") <= 10
        AND 1 <= ALL ("budget_thresholds_percent") AND 100 >= ALL ("budget_thresholds_percent")
        AND array_position("budget_thresholds_percent", NULL) IS NULL)
);
CREATE INDEX "alert_settings_due_idx" ON "alert_settings" ("evaluated_at" NULLS FIRST)
    WHERE "enabled";

CREATE TABLE "alert_events" (
    "id" TEXT PRIMARY KEY,
    "account_id" TEXT NOT NULL REFERENCES "accounts"("id") ON DELETE RESTRICT,
    "type" TEXT NOT NULL
        CHECK ("type" IN ('balance.low', 'budget.threshold', 'balance.exhaustion_projected')),
    "data" JSONB NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3)
);
CREATE INDEX "alert_events_unpublished_idx" ON "alert_events" ("occurred_at")
    WHERE "published_at" IS NULL;
CREATE INDEX "alert_events_account_idx" ON "alert_events" ("account_id", "occurred_at");
