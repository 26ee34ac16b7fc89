-- A key's own list of models (empty: any model), which also covers the scoped tokens it signs:
-- a token's list can narrow it, never widen it. The next money rule after admission became
-- steps: the key's list is read by the credential step and checked by the model step, and the
-- state gains one field (billing of the previous release reads columns by name and ignores it).
ALTER TABLE "api_keys" ADD COLUMN "models" TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_models_bounded" CHECK (cardinality("models") <= 256);

ALTER TYPE "billing_admission" ADD ATTRIBUTE key_models TEXT[];

-- billing_admission_credential: its live definition. To change it: README.md in this directory.
--
-- Admission, step 1 (billing_admit_v5): who is calling. An API key by its digest; or a scoped
-- token, whose signing key must still be the row its signature was verified with (else
-- `key_changed`: Node reads the key again) and whose registry row, once it has one, is
-- authoritative (`token_mismatch`, `token_revoked`). Then the account's suspension. Nothing is
-- counted yet.
CREATE OR REPLACE FUNCTION "billing_admission_credential"(r billing_admission_request)
RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    adm billing_admission;
    a RECORD;
    t RECORD;
BEGIN
    IF r.key_digest IS NOT NULL THEN
        SELECT ac.id, ac.status::text AS status, ac.rate_limit_per_minute,
               ac.webhook_format::text AS webhook_format, k.name, k.key_digest, k.id AS key_id,
               k.requests_per_minute, k.tokens_per_minute, k.models
          INTO a
          FROM api_keys k JOIN accounts ac ON ac.id = k.account_id
         WHERE k.key_digest = r.key_digest;
        IF NOT FOUND THEN adm.outcome := 'invalid_api_key'; RETURN adm; END IF;
        adm.key_digest := a.key_digest;
    ELSE
        SELECT ac.id, ac.status::text AS status, ac.rate_limit_per_minute,
               ac.webhook_format::text AS webhook_format, k.name, k.key_digest, k.id AS key_id,
               k.requests_per_minute, k.tokens_per_minute, k.models
          INTO a
          FROM api_keys k JOIN accounts ac ON ac.id = k.account_id
         WHERE k.id = r.signing_key_id AND k.account_id = r.account_id
           AND k.key_digest = r.signing_key_digest;
        IF NOT FOUND THEN adm.outcome := 'key_changed'; RETURN adm; END IF;
        SELECT st.id, st.account_id, st.api_key_name, st.models, st.spending_limit_micro_dzd,
               st.expires_at, st.revoked_at, st.requests_per_minute, st.tokens_per_minute
          INTO t FROM scoped_tokens st WHERE st.digest = r.token_digest;
        adm.registered := FOUND;
        IF adm.registered THEN
            IF t.account_id <> a.id OR t.api_key_name <> a.name THEN
                adm.outcome := 'token_mismatch'; RETURN adm;
            END IF;
            IF t.revoked_at IS NOT NULL THEN adm.outcome := 'token_revoked'; RETURN adm; END IF;
            -- Once registered, the registry row is authoritative.
            adm.token_id := t.id; adm.token_models := NULLIF(t.models, ARRAY[]::text[]);
            adm.token_limit := t.spending_limit_micro_dzd; adm.token_expires_at := t.expires_at;
            adm.token_requests_per_minute := t.requests_per_minute;
            adm.token_tokens_per_minute := t.tokens_per_minute;
        ELSE
            -- A client-minted token: its own claims, until admission registers it.
            adm.token_models := r.token_models; adm.token_limit := r.token_limit;
            adm.token_expires_at := r.token_expires_at;
        END IF;
    END IF;
    adm.account_id := a.id; adm.api_key_name := a.name; adm.account_status := a.status;
    adm.rate_limit_per_minute := a.rate_limit_per_minute; adm.webhook_format := a.webhook_format;
    adm.key_id := a.key_id;
    adm.key_requests_per_minute := a.requests_per_minute;
    adm.key_tokens_per_minute := a.tokens_per_minute;
    adm.key_models := NULLIF(a.models, ARRAY[]::text[]);
    IF a.status = 'suspended' THEN adm.outcome := 'account_suspended'; END IF;
    RETURN adm;
END;
$$;

-- billing_admission_model: its live definition. To change it: README.md in this directory.
--
-- Admission, step 3 (billing_admit_v5): the model, of a provider and kind the endpoint serves
-- (404); a parameter default models refuse (400); content the model does not declare (400
-- naming the first such part: images need the `image` modality, remote image URLs also
-- `remote_images`); the API key's model list, which covers the tokens it signs (403); the
-- scoped token's model list (403).
CREATE OR REPLACE FUNCTION "billing_admission_model"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    m RECORD;
BEGIN
    SELECT mm.id, mm.kind::text AS kind, mm.provider::text AS provider,
           mm.protocol::text AS protocol, mm.upstream_model, mm.input_price_micro_dzd_per_m,
           mm.output_price_micro_dzd_per_m, mm.max_output_tokens, mm.nodes, mm.updated_at,
           mm.input_modalities, mm.image_tokens, mm.remote_images
      INTO m FROM models mm WHERE mm.id = r.model;
    IF NOT FOUND THEN adm.outcome := 'model_not_found'; RETURN adm; END IF;
    adm.model_id := m.id; adm.model_kind := m.kind; adm.model_provider := m.provider;
    adm.model_protocol := m.protocol; adm.model_upstream := m.upstream_model;
    adm.model_input_price := m.input_price_micro_dzd_per_m;
    adm.model_output_price := m.output_price_micro_dzd_per_m;
    adm.model_max_output_tokens := m.max_output_tokens; adm.model_nodes := m.nodes;
    adm.model_updated_at := m.updated_at; adm.model_input_modalities := m.input_modalities;
    adm.model_image_tokens := m.image_tokens; adm.model_remote_images := m.remote_images;
    IF (r.providers IS NOT NULL AND NOT m.provider = ANY(r.providers))
       OR (r.kinds IS NOT NULL AND NOT m.kind = ANY(r.kinds)) THEN
        adm.outcome := 'model_not_on_endpoint'; RETURN adm;
    END IF;
    IF r.node_unsupported IS NOT NULL AND m.provider = 'node' THEN
        adm.outcome := 'unsupported_parameter'; RETURN adm;
    END IF;
    SELECT k INTO adm.refused_media_kind
      FROM unnest(COALESCE(r.media_kinds, ARRAY[]::text[])) WITH ORDINALITY AS u(k, i)
     WHERE NOT CASE k WHEN 'remote_image' THEN 'image' = ANY(m.input_modalities) AND m.remote_images
                      ELSE k = ANY(m.input_modalities) END
     ORDER BY i LIMIT 1;
    IF adm.refused_media_kind IS NOT NULL THEN
        adm.outcome := 'unsupported_content'; RETURN adm;
    END IF;
    IF adm.key_models IS NOT NULL AND NOT m.id = ANY(adm.key_models) THEN
        adm.outcome := 'model_not_allowed_for_key'; RETURN adm;
    END IF;
    IF r.key_digest IS NULL AND adm.token_models IS NOT NULL AND NOT m.id = ANY(adm.token_models) THEN
        adm.outcome := 'model_not_allowed';
    END IF;
    RETURN adm;
END;
$$;
