-- billing_budget_instant: its live definition. To change it: README.md in this directory.
--
-- The first instant a local time happens in a zone. Where clocks fall back over it, a local
-- time happens twice and `AT TIME ZONE` gives the later one: the earlier (30 min or an hour
-- before) is taken when it shows the same local time. Where clocks spring forward over it, it
-- never happens: `AT TIME ZONE` gives the first instant after the gap.
CREATE OR REPLACE FUNCTION "billing_budget_instant"(p_local TIMESTAMP, p_time_zone TEXT)
RETURNS TIMESTAMPTZ
LANGUAGE sql STABLE SET search_path = public, pg_temp
AS $$
    SELECT min(c)
      FROM unnest(ARRAY[(p_local AT TIME ZONE p_time_zone) - interval '1 hour',
                        (p_local AT TIME ZONE p_time_zone) - interval '30 minutes',
                        p_local AT TIME ZONE p_time_zone]) AS c
     WHERE c = p_local AT TIME ZONE p_time_zone OR c AT TIME ZONE p_time_zone = p_local
$$;
