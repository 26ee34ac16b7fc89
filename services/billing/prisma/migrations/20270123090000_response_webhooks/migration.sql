-- A background response's webhook (issue 32 item 4): the `webhook` its request named, sealed
-- with MASTER_KEY (AAD "response_webhook:<account_id>:<response_id>"), kept with the response.
-- When the response ends (its result stored, a cancel, or billing finding it lost) the same
-- statement sets `type` and `ended_at`; billing's outbox then publishes a `response.ended` event
-- to the dispatcher and sets `published_at` once the broker confirmed it (at least once; the
-- dispatcher keeps one delivery per response). Rows go with their response (cascade): a response
-- deleted before its end is announced to nobody.

CREATE TABLE "response_webhooks" (
    "response_id" TEXT PRIMARY KEY REFERENCES "stored_responses"("id") ON DELETE CASCADE,
    "account_id" TEXT NOT NULL,
    "url_ciphertext" BYTEA NOT NULL,
    "url_nonce" BYTEA NOT NULL,
    "url_tag" BYTEA NOT NULL,
    "url_key_version" INTEGER NOT NULL CHECK ("url_key_version" > 0),
    "type" TEXT CHECK ("type" IN ('response.completed', 'response.incomplete', 'response.failed',
                                  'response.cancelled')),
    "ended_at" TIMESTAMPTZ(3),
    "published_at" TIMESTAMPTZ(3),
    CONSTRAINT "response_webhooks_ended" CHECK (("type" IS NULL) = ("ended_at" IS NULL)),
    CONSTRAINT "response_webhooks_published" CHECK ("published_at" IS NULL OR "ended_at" IS NOT NULL)
);
CREATE INDEX "response_webhooks_unpublished_idx" ON "response_webhooks" ("ended_at")
    WHERE "ended_at" IS NOT NULL AND "published_at" IS NULL;

-- Background responses still running, for the sweep that ends the lost ones (few at any time).
CREATE INDEX "stored_responses_in_progress_idx" ON "stored_responses" ("created_at")
    WHERE "in_progress";
