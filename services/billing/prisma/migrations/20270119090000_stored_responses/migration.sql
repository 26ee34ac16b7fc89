-- Stored Responses API state (`/v1/responses` with `store`): what a later request continues
-- through `previous_response_id` or `item_reference` (contract:
-- packages/contracts/src/responses-state-api.ts).
--
-- `stored_responses`: one row per stored response. Its content (the request's input items and
-- the response object, as JSON) is customer content: sealed with MASTER_KEY, AAD
-- "stored_response:<account_id>:<id>:<token_digest or 'key'>", so a row's content copied to
-- another row, or a row given to another reader, no longer opens. `token_digest` is the scoped
-- token that stored it (null: an API key of the account). `previous_response_id` has no foreign
-- key on purpose: a link deleted or purged must fail the chain by name (404), not shorten it.
-- Rows are deleted (never flagged) when a client deletes them or at `expires_at` (the purge
-- walks the index on it).
--
-- `stored_response_items`: which response holds an item, for `item_reference`. Item ids are not
-- content (not sealed). One row per (account, item id): the first response that stored an id
-- keeps it (inserted ON CONFLICT DO NOTHING), a later response repeating it (a client sending
-- back earlier items with their ids) adds nothing. Rows go with their response (cascade).
-- Neither table is granted to the finance role.

CREATE TABLE "stored_responses" (
    "id" TEXT NOT NULL CHECK ("id" ~ '^resp_[0-9a-f]{32}$'),
    "account_id" TEXT NOT NULL,
    "token_digest" TEXT CHECK ("token_digest" ~ '^[0-9a-f]{64}$'),
    "previous_response_id" TEXT,
    "ciphertext" BYTEA NOT NULL,
    "nonce" BYTEA NOT NULL,
    "tag" BYTEA NOT NULL,
    "key_version" INTEGER NOT NULL CHECK ("key_version" > 0),
    "content_bytes" INTEGER NOT NULL CHECK ("content_bytes" >= 0),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "stored_responses_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "stored_responses_expiry" CHECK ("expires_at" > "created_at")
);
CREATE INDEX "stored_responses_expires_at_idx" ON "stored_responses"("expires_at");
ALTER TABLE "stored_responses" ADD CONSTRAINT "stored_responses_account_id_fkey"
    FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "stored_response_items" (
    "account_id" TEXT NOT NULL,
    "item_id" TEXT NOT NULL CHECK ("item_id" ~ '^[A-Za-z0-9_-]{1,128}$'),
    "response_id" TEXT NOT NULL,

    CONSTRAINT "stored_response_items_pkey" PRIMARY KEY ("account_id", "item_id")
);
-- The cascade from a deleted response finds its items by this index.
CREATE INDEX "stored_response_items_response_id_idx" ON "stored_response_items"("response_id");
ALTER TABLE "stored_response_items" ADD CONSTRAINT "stored_response_items_response_id_fkey"
    FOREIGN KEY ("response_id") REFERENCES "stored_responses"("id")
    ON DELETE CASCADE ON UPDATE CASCADE;
