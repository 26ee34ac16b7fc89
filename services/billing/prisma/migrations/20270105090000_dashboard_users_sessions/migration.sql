-- Issue 16: the dashboard's users (account owners, operator users), owner invitations and
-- sessions; approximate last use of API keys. Tokens (invitations, sessions) are stored as
-- SHA-256 digests only; passwords as scrypt hashes (src/dashboard/passwords.ts).

-- CreateEnum
CREATE TYPE "OperatorRole" AS ENUM ('operator', 'finance');

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "last_used_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "owner_users" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "password_hash" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "owner_users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "operator_users" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "role" "OperatorRole" NOT NULL,
    "password_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "operator_users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "owner_invitations" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "token_digest" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "owner_invitations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "dashboard_sessions" (
    "id" TEXT NOT NULL,
    "token_digest" TEXT NOT NULL,
    "owner_user_id" TEXT,
    "operator_user_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "dashboard_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "owner_users_email_key" ON "owner_users"("email");

-- CreateIndex
CREATE INDEX "owner_users_account_id_idx" ON "owner_users"("account_id");

-- CreateIndex
CREATE UNIQUE INDEX "operator_users_email_key" ON "operator_users"("email");

-- CreateIndex
CREATE UNIQUE INDEX "owner_invitations_token_digest_key" ON "owner_invitations"("token_digest");

-- CreateIndex
CREATE INDEX "owner_invitations_expires_at_idx" ON "owner_invitations"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "dashboard_sessions_token_digest_key" ON "dashboard_sessions"("token_digest");

-- CreateIndex
CREATE INDEX "dashboard_sessions_expires_at_idx" ON "dashboard_sessions"("expires_at");

-- AddForeignKey
ALTER TABLE "owner_users" ADD CONSTRAINT "owner_users_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Hand-written: a session belongs to exactly one user.
ALTER TABLE "dashboard_sessions" ADD CONSTRAINT "dashboard_sessions_one_user"
    CHECK (("owner_user_id" IS NULL) <> ("operator_user_id" IS NULL));
