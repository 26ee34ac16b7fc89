-- The previous release's admission goes (prisma/functions/README.md, "Versions during a rolling
-- update"): every billing and edge since the release of 2026-11-28 admits through
-- billing_admit_v5 (by billing_admit_batch_v1), so nothing calls the v4 pair any more. The
-- BEFORE INSERT trigger that copied the v4 pair's request context onto a hold goes with it: v5's
-- hold step writes those columns itself, and the trigger ran on every hold inserted.
DROP TRIGGER "holds_admission_context" ON "holds";
DROP FUNCTION "holds_admission_context"();
DROP FUNCTION "billing_admit_with_context_v4"(
    TEXT, TEXT, TEXT, TEXT, TEXT, TEXT[], BIGINT, TIMESTAMPTZ, TEXT, BIGINT, TEXT, BIGINT, BIGINT,
    INTEGER, BOOLEAN, TEXT[], TEXT[], TEXT, TEXT[], INTEGER, TEXT, TIMESTAMPTZ, TIMESTAMPTZ, TEXT,
    TEXT);
DROP FUNCTION "billing_admit_v4"(
    TEXT, TEXT, TEXT, TEXT, TEXT, TEXT[], BIGINT, TIMESTAMPTZ, TEXT, BIGINT, TEXT, BIGINT, BIGINT,
    INTEGER, BOOLEAN, TEXT[], TEXT[], TEXT, TEXT[], INTEGER, TEXT, TIMESTAMPTZ, TIMESTAMPTZ);
