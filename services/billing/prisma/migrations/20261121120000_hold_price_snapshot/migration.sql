-- A hold remembers the prices its amount was computed with; settlement charges those, not the
-- catalog's prices at settlement time (a price change or a removed model mid-job must not
-- change what an admitted request costs). Nullable: holds placed before this migration (or by
-- a replica of the previous release during a rolling update) have none and settle at the
-- catalog's prices, as before.

-- AlterTable
ALTER TABLE "holds" ADD COLUMN     "input_price_micro_dzd_per_m" BIGINT,
ADD COLUMN     "output_price_micro_dzd_per_m" BIGINT;

-- Both prices or neither, never negative.
ALTER TABLE "holds"
    ADD CONSTRAINT "holds_prices_together" CHECK (
        ("input_price_micro_dzd_per_m" IS NULL) = ("output_price_micro_dzd_per_m" IS NULL)),
    ADD CONSTRAINT "holds_prices_nonnegative" CHECK (
        "input_price_micro_dzd_per_m" >= 0 AND "output_price_micro_dzd_per_m" >= 0);

-- Pending holds take the prices they would have been settled at.
UPDATE "holds" h
   SET "input_price_micro_dzd_per_m" = m."input_price_micro_dzd_per_m",
       "output_price_micro_dzd_per_m" = m."output_price_micro_dzd_per_m"
  FROM "models" m
 WHERE m."id" = h."model" AND h."status" = 'pending';
