-- billing_admission_model_v2: its live definition. To change it: README.md in this directory.
--
-- Admission, step 3 (billing_admit_batch_v1): the model (the row the batch read for the item,
-- NULL if none), of a provider and kind the endpoint serves (404); a parameter default models
-- refuse (400); content the model does not declare (400 naming the first such part: images need
-- the `image` modality, remote image URLs also `remote_images`); the API key's model list, which
-- covers the tokens it signs (403); the scoped token's model list (403).
CREATE OR REPLACE FUNCTION "billing_admission_model_v2"(
    r billing_admission_request, adm billing_admission, m models
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
BEGIN
    IF m.id IS NULL THEN adm.outcome := 'model_not_found'; RETURN adm; END IF;
    adm.model_id := m.id; adm.model_kind := m.kind::text; adm.model_provider := m.provider::text;
    adm.model_protocol := m.protocol::text; adm.model_upstream := m.upstream_model;
    adm.model_input_price := m.input_price_micro_dzd_per_m;
    adm.model_output_price := m.output_price_micro_dzd_per_m;
    adm.model_max_output_tokens := m.max_output_tokens; adm.model_nodes := m.nodes;
    adm.model_updated_at := m.updated_at; adm.model_input_modalities := m.input_modalities;
    adm.model_image_tokens := m.image_tokens; adm.model_remote_images := m.remote_images;
    IF (r.providers IS NOT NULL AND NOT m.provider::text = ANY(r.providers))
       OR (r.kinds IS NOT NULL AND NOT m.kind::text = ANY(r.kinds)) THEN
        adm.outcome := 'model_not_on_endpoint'; RETURN adm;
    END IF;
    IF r.node_unsupported IS NOT NULL AND m.provider = 'node' THEN
        adm.outcome := 'unsupported_parameter'; RETURN adm;
    END IF;
    -- Text alone (most requests) has nothing to check.
    IF cardinality(r.media_kinds) > 0 THEN
        SELECT k INTO adm.refused_media_kind
          FROM unnest(r.media_kinds) WITH ORDINALITY AS u(k, i)
         WHERE NOT CASE k WHEN 'remote_image'
                          THEN 'image' = ANY(m.input_modalities) AND m.remote_images
                          ELSE k = ANY(m.input_modalities) END
         ORDER BY i LIMIT 1;
        IF adm.refused_media_kind IS NOT NULL THEN
            adm.outcome := 'unsupported_content'; RETURN adm;
        END IF;
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
