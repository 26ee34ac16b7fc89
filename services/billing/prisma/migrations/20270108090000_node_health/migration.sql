-- Issue 16: what workers last observed of each model node, for the operators' catalog. Keyed by
-- the node URL (a worker's node registry is per URL, shared by the models on that node); the
-- last report wins. Rows of nodes no longer in the catalog or not seen for a day are pruned.
CREATE TABLE "node_health" (
    "url" TEXT NOT NULL,
    "healthy" BOOLEAN NOT NULL,
    "last_error_kind" TEXT,
    "observed_at" TIMESTAMPTZ(3) NOT NULL,
    "worker_id" TEXT NOT NULL,
    CONSTRAINT "node_health_pkey" PRIMARY KEY ("url")
);
