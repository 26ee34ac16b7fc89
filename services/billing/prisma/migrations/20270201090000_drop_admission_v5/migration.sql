-- The previous release's admission goes (prisma/functions/README.md, "Versions during a rolling
-- update"): since the release of 2026-12-01 (migration 20270131090000_set_based_admission),
-- billing_admit_batch_v1 admits set-based through the steps' _v2 forms, and nothing calls
-- billing_admit_v5 or the five steps only it called. The steps it shared with the batch
-- (_cost, _token_limit, _tokens_per_minute, _budgets) stay.
DROP FUNCTION "billing_admit_v5"(billing_admission_request);
DROP FUNCTION "billing_admission_credential"(billing_admission_request);
DROP FUNCTION "billing_admission_requests"(billing_admission_request, billing_admission);
DROP FUNCTION "billing_admission_model"(billing_admission_request, billing_admission);
DROP FUNCTION "billing_admission_balance"(billing_admission_request, billing_admission);
DROP FUNCTION "billing_admission_hold"(billing_admission_request, billing_admission);
