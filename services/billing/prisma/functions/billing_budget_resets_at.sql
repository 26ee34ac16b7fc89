-- billing_budget_resets_at: its live definition. To change it: README.md in this directory.
--
-- When the window that started at `p_window_start` ends: the next period boundary after it, in
-- the budget's time zone (a window started mid-period by a change of the budget ends at the
-- period's usual boundary). NULL for a `total` budget.
CREATE OR REPLACE FUNCTION "billing_budget_resets_at"(
    p_period TEXT, p_time_zone TEXT, p_window_start TIMESTAMPTZ
) RETURNS TIMESTAMPTZ
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN p_period = 'total' THEN NULL
                ELSE public.billing_budget_instant(
                         date_trunc(p_period, p_window_start AT TIME ZONE p_time_zone)
                             + ('1 ' || p_period)::interval,
                         p_time_zone)
           END
$$;
