-- A key's own list of models (empty: any model), which also covers the scoped tokens it signs:
-- a token's list can narrow it, never widen it. The next money rule after admission became
-- steps: the key's list is read by the credential step and checked by the model step, and the
-- state gains one field (billing of the previous release reads columns by name and ignores it).
-- The two steps themselves are their files in prisma/functions, applied after the migrations
-- whenever they change (the first migration that no longer copies a function's body).
ALTER TABLE "api_keys" ADD COLUMN "models" TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_models_bounded" CHECK (cardinality("models") <= 256);

ALTER TYPE "billing_admission" ADD ATTRIBUTE key_models TEXT[];
