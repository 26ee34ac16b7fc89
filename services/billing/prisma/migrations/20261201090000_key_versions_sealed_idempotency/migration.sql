-- MASTER_KEY carries versions (v2:<b64>,v1:<b64>): each sealed value records the version that
-- sealed it. Secrets sealed before versions used the one key there was, version 1; the default
-- stays so that a replica of the previous release (one key = version 1) still writes correct
-- rows during a rolling update.

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "secret_key_version" INTEGER NOT NULL DEFAULT 1;

-- Stored answers to edge requests are sealed (they may contain a newly minted scoped token).
-- Records written before this migration keep their plaintext `response_body` until they expire
-- (24 h at most) and the purge deletes them.

-- AlterTable
ALTER TABLE "idempotency_records" ADD COLUMN     "response_ciphertext" BYTEA,
ADD COLUMN     "response_key_version" INTEGER,
ADD COLUMN     "response_nonce" BYTEA,
ADD COLUMN     "response_tag" BYTEA;

-- A sealed answer is complete or absent.
ALTER TABLE "api_keys"
    ADD CONSTRAINT "api_keys_secret_key_version_positive" CHECK ("secret_key_version" > 0);
ALTER TABLE "idempotency_records"
    ADD CONSTRAINT "idempotency_records_sealed_complete" CHECK (
        ("response_ciphertext" IS NULL) = ("response_nonce" IS NULL)
        AND ("response_ciphertext" IS NULL) = ("response_tag" IS NULL)
        AND ("response_ciphertext" IS NULL) = ("response_key_version" IS NULL));
