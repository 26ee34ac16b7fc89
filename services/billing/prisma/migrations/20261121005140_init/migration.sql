-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "AccountStatus" AS ENUM ('active', 'suspended');

-- CreateEnum
CREATE TYPE "WebhookFormat" AS ENUM ('A', 'B');

-- CreateEnum
CREATE TYPE "TokenOrigin" AS ENUM ('issued', 'client');

-- CreateEnum
CREATE TYPE "ModelKind" AS ENUM ('chat', 'completion', 'embedding', 'image', 'speech', 'transcription', 'video', 'rerank');

-- CreateEnum
CREATE TYPE "ModelProvider" AS ENUM ('node', 'external');

-- CreateEnum
CREATE TYPE "NodeProtocol" AS ENUM ('openai', 'tgi');

-- CreateEnum
CREATE TYPE "TransactionKind" AS ENUM ('credit', 'hold_settlement', 'reversal', 'adjustment');

-- CreateEnum
CREATE TYPE "HoldStatus" AS ENUM ('pending', 'settled', 'voided', 'expired');

-- CreateTable
CREATE TABLE "accounts" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "status" "AccountStatus" NOT NULL DEFAULT 'active',
    "rate_limit_per_minute" INTEGER NOT NULL DEFAULT 100,
    "webhook_format" "WebhookFormat" NOT NULL DEFAULT 'A',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "key_digest" TEXT NOT NULL,
    "secret_ciphertext" BYTEA NOT NULL,
    "secret_nonce" BYTEA NOT NULL,
    "secret_auth_tag" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scoped_tokens" (
    "id" TEXT NOT NULL,
    "digest" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "api_key_name" TEXT NOT NULL,
    "models" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "spending_limit_micro_dzd" BIGINT,
    "spent_micro_dzd" BIGINT NOT NULL DEFAULT 0,
    "reserved_micro_dzd" BIGINT NOT NULL DEFAULT 0,
    "revoked_at" TIMESTAMPTZ(3),
    "origin" "TokenOrigin" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "scoped_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "models" (
    "id" TEXT NOT NULL,
    "kind" "ModelKind" NOT NULL,
    "provider" "ModelProvider" NOT NULL,
    "protocol" "NodeProtocol" NOT NULL DEFAULT 'openai',
    "upstream_model" TEXT NOT NULL,
    "input_price_micro_dzd_per_m" BIGINT NOT NULL,
    "output_price_micro_dzd_per_m" BIGINT NOT NULL,
    "max_output_tokens" INTEGER NOT NULL,
    "nodes" JSONB NOT NULL DEFAULT '[]',
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "models_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_transactions" (
    "id" TEXT NOT NULL,
    "kind" "TransactionKind" NOT NULL,
    "account_id" TEXT NOT NULL,
    "reference" TEXT,
    "hold_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_transactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_entries" (
    "id" BIGSERIAL NOT NULL,
    "transaction_id" TEXT NOT NULL,
    "ledger_account" TEXT NOT NULL,
    "account_id" TEXT,
    "amount_micro_dzd" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "account_balances" (
    "account_id" TEXT NOT NULL,
    "posted_credits_micro_dzd" BIGINT NOT NULL DEFAULT 0,
    "posted_debits_micro_dzd" BIGINT NOT NULL DEFAULT 0,
    "pending_micro_dzd" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "account_balances_pkey" PRIMARY KEY ("account_id")
);

-- CreateTable
CREATE TABLE "holds" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "scoped_token_id" TEXT,
    "amount_micro_dzd" BIGINT NOT NULL,
    "status" "HoldStatus" NOT NULL DEFAULT 'pending',
    "settled_amount_micro_dzd" BIGINT,
    "model" TEXT NOT NULL,
    "priority" BOOLEAN NOT NULL DEFAULT false,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finalized_at" TIMESTAMPTZ(3),

    CONSTRAINT "holds_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_records" (
    "scope" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "response_status" INTEGER NOT NULL,
    "response_body" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("scope","key")
);

-- CreateTable
CREATE TABLE "rate_limit_windows" (
    "account_id" TEXT NOT NULL,
    "window_start_ms" BIGINT NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "rate_limit_windows_pkey" PRIMARY KEY ("account_id","window_start_ms")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_digest_key" ON "api_keys"("key_digest");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_account_id_name_key" ON "api_keys"("account_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "scoped_tokens_digest_key" ON "scoped_tokens"("digest");

-- CreateIndex
CREATE INDEX "scoped_tokens_account_id_idx" ON "scoped_tokens"("account_id");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_transactions_hold_id_key" ON "ledger_transactions"("hold_id");

-- CreateIndex
CREATE INDEX "ledger_transactions_account_id_created_at_idx" ON "ledger_transactions"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "ledger_entries_transaction_id_idx" ON "ledger_entries"("transaction_id");

-- CreateIndex
CREATE INDEX "ledger_entries_account_id_created_at_idx" ON "ledger_entries"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "ledger_entries_ledger_account_id_idx" ON "ledger_entries"("ledger_account", "id");

-- CreateIndex
CREATE INDEX "holds_status_expires_at_idx" ON "holds"("status", "expires_at");

-- CreateIndex
CREATE INDEX "holds_account_id_status_idx" ON "holds"("account_id", "status");

-- CreateIndex
CREATE INDEX "idempotency_records_expires_at_idx" ON "idempotency_records"("expires_at");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scoped_tokens" ADD CONSTRAINT "scoped_tokens_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "ledger_transactions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "account_balances" ADD CONSTRAINT "account_balances_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- ---------------------------------------------------------------------------------------------
-- Hand-written below this line: constraints Prisma's schema language cannot express. Prisma's
-- diff ignores CHECK constraints and triggers, so later `migrate diff` runs will not try to
-- drop them.
-- ---------------------------------------------------------------------------------------------

-- Balance projection: available = posted credits − posted debits − pending holds, never < 0.
ALTER TABLE "account_balances"
    ADD CONSTRAINT "account_balances_components_nonnegative"
        CHECK ("posted_credits_micro_dzd" >= 0 AND "posted_debits_micro_dzd" >= 0 AND "pending_micro_dzd" >= 0),
    ADD CONSTRAINT "account_balances_available_nonnegative"
        CHECK ("posted_credits_micro_dzd" - "posted_debits_micro_dzd" - "pending_micro_dzd" >= 0);

-- Holds: a non-negative reservation; a settlement never exceeds what was held.
ALTER TABLE "holds"
    ADD CONSTRAINT "holds_amount_nonnegative" CHECK ("amount_micro_dzd" >= 0),
    ADD CONSTRAINT "holds_settled_within_amount"
        CHECK ("settled_amount_micro_dzd" IS NULL
               OR ("settled_amount_micro_dzd" >= 0 AND "settled_amount_micro_dzd" <= "amount_micro_dzd"));

-- Scoped-token spend counters never go negative.
ALTER TABLE "scoped_tokens"
    ADD CONSTRAINT "scoped_tokens_spend_nonnegative"
        CHECK ("spent_micro_dzd" >= 0 AND "reserved_micro_dzd" >= 0
               AND ("spending_limit_micro_dzd" IS NULL OR "spending_limit_micro_dzd" >= 0));

-- The ledger is append-only: rows are never updated or deleted; corrections are new
-- (reversing) transactions. Rejects UPDATE/DELETE row by row and TRUNCATE.
CREATE FUNCTION "ledger_reject_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger is append-only: % on % is not allowed', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER "ledger_transactions_append_only"
    BEFORE UPDATE OR DELETE ON "ledger_transactions"
    FOR EACH ROW EXECUTE FUNCTION "ledger_reject_change"();
CREATE TRIGGER "ledger_transactions_no_truncate"
    BEFORE TRUNCATE ON "ledger_transactions"
    FOR EACH STATEMENT EXECUTE FUNCTION "ledger_reject_change"();
CREATE TRIGGER "ledger_entries_append_only"
    BEFORE UPDATE OR DELETE ON "ledger_entries"
    FOR EACH ROW EXECUTE FUNCTION "ledger_reject_change"();
CREATE TRIGGER "ledger_entries_no_truncate"
    BEFORE TRUNCATE ON "ledger_entries"
    FOR EACH STATEMENT EXECUTE FUNCTION "ledger_reject_change"();

-- Double entry: the entries of a journal transaction sum to zero. Checked at the end of every
-- INSERT statement on ledger_entries, for each journal transaction it touched: insert all legs of
-- a journal transaction with ONE statement (a multi-row INSERT, Prisma's `createMany`).
-- (Not a deferred constraint trigger checked at COMMIT: Prisma 6.19 with @prisma/adapter-pg
-- mishandles an error raised by COMMIT: it reports "Transaction already closed" and leaks the
-- pooled connection.)
CREATE FUNCTION "ledger_check_balanced"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    unbalanced RECORD;
BEGIN
    SELECT e."transaction_id" AS id, SUM(e."amount_micro_dzd") AS total INTO unbalanced
        FROM "ledger_entries" e
        WHERE e."transaction_id" IN (SELECT "transaction_id" FROM inserted)
        GROUP BY e."transaction_id"
        HAVING SUM(e."amount_micro_dzd") <> 0
        LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'ledger transaction % is unbalanced: its entries sum to % µDZD',
            unbalanced.id, unbalanced.total
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER "ledger_entries_balanced"
    AFTER INSERT ON "ledger_entries"
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION "ledger_check_balanced"();
