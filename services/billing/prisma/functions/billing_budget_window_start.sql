-- billing_budget_window_start: its live definition. To change it: README.md in this directory.
--
-- The start of the budget window that contains `p_at`: the period's boundary (midnight, Monday
-- midnight, the 1st at midnight) in the budget's time zone, as an instant; -infinity for a
-- `total` budget, whose window never rolls. Computed on local time and converted back
-- (billing_budget_instant), so a day with a daylight-saving change is 23 or 25 hours long.
CREATE OR REPLACE FUNCTION "billing_budget_window_start"(
    p_period TEXT, p_time_zone TEXT, p_at TIMESTAMPTZ
) RETURNS TIMESTAMPTZ
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN p_period = 'total' THEN '-infinity'::timestamptz
                ELSE public.billing_budget_instant(date_trunc(p_period, p_at AT TIME ZONE p_time_zone),
                                            p_time_zone)
           END
$$;
