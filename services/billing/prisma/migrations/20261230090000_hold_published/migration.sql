-- Issue 15 defect 8: a hold whose job was never published (edge died between admission and
-- publish) is released by the sweeper after a short publish grace instead of its TTL. Edge
-- marks the hold published once the broker confirmed the job (and sizes its expiry from the
-- job's deadline then). Holds pending at this migration are treated as published: their jobs
-- may be running.
ALTER TABLE "holds" ADD COLUMN "published_at" TIMESTAMPTZ(3);
UPDATE "holds" SET "published_at" = "created_at" WHERE "status" = 'pending';
CREATE INDEX "holds_unpublished_created_at_idx" ON "holds" ("created_at")
    WHERE "status" = 'pending' AND "published_at" IS NULL;
