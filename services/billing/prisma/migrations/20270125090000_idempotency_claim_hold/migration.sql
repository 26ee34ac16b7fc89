-- An edge request's Idempotency-Key claim names the hold its request placed. Edge stores the
-- answer for the key before it sends it, so a claim still in progress past its lease whose hold
-- settled was never answered: billing refunds that hold and frees the key
-- (docs/adr/0067-a-lapsed-idempotency-claim-refunds-its-hold.md). Nullable, no default: adding
-- it rewrites nothing.
ALTER TABLE "idempotency_records" ADD COLUMN "hold_id" TEXT;

-- The lapsed claims billing looks for on every sweep: few rows, so a small partial index.
CREATE INDEX IF NOT EXISTS "idempotency_records_lapsed_claim_idx" ON "idempotency_records" ("expires_at")
  WHERE "response_status" = 0 AND "hold_id" IS NOT NULL;
