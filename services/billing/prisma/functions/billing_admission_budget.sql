-- billing_admission_budget: its live definition. To change it: README.md in this directory.
--
-- One budget (a locked row of `budgets`) against the admission's worst case: a window whose
-- period boundary passed starts over; what is spent in the window plus what is held must leave
-- room for the worst case, else 402 naming the budget (`budget_scope`: api_key or
-- scoped_token), its numbers and when it resets. An admitted request belongs to the window: the
-- hold is dated at its start at the earliest (a clock read just before it began), so its cost
-- counts there (holds_budget_end) and is never lost between windows.
CREATE OR REPLACE FUNCTION "billing_admission_budget"(
    adm billing_admission, bb budgets, scope TEXT, at TIMESTAMPTZ
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
DECLARE
    window_start TIMESTAMPTZ := billing_budget_window_start(bb.period, bb.time_zone, at);
BEGIN
    IF window_start > bb.window_start THEN
        bb.window_start := window_start;
        bb.spent_micro_dzd := 0;
        UPDATE budgets SET window_start = bb.window_start, spent_micro_dzd = 0, updated_at = at
         WHERE id = bb.id;
    END IF;
    IF bb.spent_micro_dzd + bb.reserved_micro_dzd + adm.worst_case_micro_dzd > bb.limit_micro_dzd THEN
        adm.budget_scope := scope; adm.budget_limit := bb.limit_micro_dzd;
        adm.budget_spent := bb.spent_micro_dzd; adm.budget_reserved := bb.reserved_micro_dzd;
        adm.budget_period := bb.period;
        adm.budget_resets_at := billing_budget_resets_at(bb.period, bb.time_zone, bb.window_start);
        adm.outcome := 'budget_exhausted';
        RETURN adm;
    END IF;
    IF scope = 'api_key' THEN adm.key_budget_id := bb.id; ELSE adm.token_budget_id := bb.id; END IF;
    adm.hold_created_at := GREATEST(adm.hold_created_at, bb.window_start);
    RETURN adm;
END;
$$;
