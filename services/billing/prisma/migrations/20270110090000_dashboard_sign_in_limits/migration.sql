-- Issue 22: the per-email limit on dashboard sign-ins, shared by every edge and billing replica.
-- One row per email (its SHA-256, lower-cased: attacker-chosen strings are not kept) while its
-- window runs: `points` attempts taken in the window that started at the first one and ends at
-- `window_ends_at`. A point is taken (one INSERT … ON CONFLICT DO UPDATE) before the password is
-- hashed and given back when it was right, so `points` counts wrong passwords and attempts in
-- flight; `granted` is what the last taking statement decided. Rows past their window are
-- deleted every minute.
CREATE TABLE "dashboard_sign_in_limits" (
    "email_digest" TEXT NOT NULL,
    "points" INTEGER NOT NULL,
    "granted" BOOLEAN NOT NULL,
    "window_ends_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "dashboard_sign_in_limits_pkey" PRIMARY KEY ("email_digest")
);

CREATE INDEX "dashboard_sign_in_limits_window_ends_at_idx" ON "dashboard_sign_in_limits"("window_ends_at");
