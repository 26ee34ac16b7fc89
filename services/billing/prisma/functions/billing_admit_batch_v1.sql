-- billing_admit_batch_v1: its live definition. To change it: README.md in this directory.
--
-- A batch of admissions in one call and one transaction: each item of the JSON array is a
-- `billing_admission_request` by field name, admitted by `billing_admit_v5`; one row per item,
-- in the items' order. The items are admitted in account order, then in the order they came
-- (an API key's account is looked up by its digest; a scoped token names its own), so two
-- concurrent batches lock the rows of their accounts in one order and cannot deadlock, and an
-- account's items keep their order. `OFFSET 0` keeps the sorted subquery apart: the lateral
-- calls run over it row by row, in its order; each call's statements see the earlier calls'
-- writes (a volatile function takes a fresh snapshot per statement), so a batch's items of one
-- account draw on one balance exactly as they would one after another. The results are kept
-- (MATERIALIZED) before they are expanded, so that each item is admitted once.
-- Its settings are the admission's: billing_admit_v5 and its steps have none of their own (each
-- would be saved and restored on every call) and run with these: the search path, and plans by
-- key only (a young database's statistics, a few rows per table, otherwise make a key's lookup a
-- hash join over every key and every account).
CREATE OR REPLACE FUNCTION "billing_admit_batch_v1"(items JSONB)
RETURNS SETOF billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $$
BEGIN
    IF jsonb_array_length(items) > 256 THEN
        RAISE EXCEPTION 'billing_admit_batch_v1: at most 256 items' USING ERRCODE = '22023';
    END IF;
    -- One item (most calls when the gateway is not saturated): nothing to order or keep apart.
    IF jsonb_array_length(items) = 1 THEN
        RETURN QUERY SELECT * FROM billing_admit_v5(
            jsonb_populate_record(NULL::billing_admission_request, items->0));
        RETURN;
    END IF;
    RETURN QUERY
        WITH admitted AS MATERIALIZED (
            SELECT b.ord, a
              FROM (SELECT e.ord,
                           jsonb_populate_record(NULL::billing_admission_request, e.item) AS r
                      FROM jsonb_array_elements(items) WITH ORDINALITY AS e(item, ord)
                      LEFT JOIN api_keys k ON k.key_digest = e.item->>'key_digest'
                     ORDER BY COALESCE(k.account_id, e.item->>'account_id'), e.ord
                    OFFSET 0) b
             CROSS JOIN LATERAL billing_admit_v5(b.r) a
        )
        SELECT (admitted.a).* FROM admitted ORDER BY admitted.ord;
END;
$$;
