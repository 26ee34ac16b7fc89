-- billing_admit_api_keys_v1: its live definition. To change it: README.md in this directory.
--
-- SECURITY DEFINER (ADR 0070): edge's admission role may execute this function and the key's
-- last use, nothing else, so it runs with its owner's table rights; the search_path is fixed for
-- that reason. It admits API keys only: every field a scoped token would set (its account, its
-- signing key, its digest and claims) is removed from each item before `billing_admit_batch_v1`
-- reads it, because those are trusted only after billing verified the token's signature; an item
-- without a key digest gets an empty one. An item without a matching key digest is thus
-- `invalid_api_key`, as in billing.
CREATE OR REPLACE FUNCTION "billing_admit_api_keys_v1"(items JSONB)
RETURNS SETOF billing_admission
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT * FROM billing_admit_batch_v1((
        SELECT COALESCE(jsonb_agg(
                   jsonb_set(e.item - ARRAY[
                       'account_id', 'signing_key_id', 'signing_key_digest', 'token_digest',
                       'token_models', 'token_limit', 'token_expires_at', 'new_token_id'
                   ], '{key_digest}', to_jsonb(COALESCE(e.item->>'key_digest', '')))
                   ORDER BY e.ord), '[]'::jsonb)
          FROM jsonb_array_elements(items) WITH ORDINALITY AS e(item, ord)));
END;
$$;
