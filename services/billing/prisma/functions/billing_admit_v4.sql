-- billing_admit_v4: its live definition. To change it: README.md in this directory.
--
-- billing_admit_v3 (budgets) with per-key rate limits: an API key's and a
-- registered scoped token's own requests per minute, counted beside the account's in the same
-- step, and tokens per minute: the request's tokens (what the hold is sized for) must fit in
-- the key's and the token's one-minute windows, and are counted there with the hold; the part a
-- hold did not use is given back when it ends (holds_rate_end). Eight more columns carry the
-- counts for the `X-RateLimit-*` headers. Production admits with billing_admit_with_context_v4.
CREATE OR REPLACE FUNCTION "billing_admit_v4"(
    p_key_digest TEXT,              -- API key: SHA-256 hex of the key (NULL for a scoped token)
    p_account_id TEXT,              -- scoped token: the kid's account
    p_signing_key_id TEXT,          -- scoped token: api_keys.id the signature verified with
    p_signing_key_digest TEXT,      --   and that row's key_digest then
    p_token_digest TEXT,            -- scoped token: SHA-256 hex of the full `jwt:...` string
    p_token_models TEXT[],          --   claims, used to register a client-minted token (NULL = any)
    p_token_limit BIGINT,           --   (NULL = no limit)
    p_token_expires_at TIMESTAMPTZ,
    p_new_token_id TEXT,            --   registry id if it registers now
    p_window_start_ms BIGINT,
    p_model TEXT,
    p_input_tokens BIGINT, p_max_output_tokens BIGINT, p_choices INTEGER, p_priority BOOLEAN,
    p_providers TEXT[], p_kinds TEXT[], p_node_unsupported TEXT,
    p_media_kinds TEXT[],           -- content beyond text, in request order (chat-content.ts)
    p_image_count INTEGER,          -- image parts: each adds the model's image_tokens
    p_hold_id TEXT, p_hold_expires_at TIMESTAMPTZ, p_now TIMESTAMPTZ
) RETURNS TABLE (
    outcome TEXT, account_id TEXT, api_key_name TEXT, account_status TEXT,
    rate_limit_per_minute INTEGER, webhook_format TEXT, key_digest TEXT, window_count INTEGER,
    token_id TEXT, token_models TEXT[], token_limit BIGINT, token_spent BIGINT,
    token_reserved BIGINT, token_expires_at TIMESTAMPTZ,
    model_id TEXT, model_kind TEXT, model_provider TEXT, model_protocol TEXT,
    model_upstream TEXT, model_input_price BIGINT, model_output_price BIGINT,
    model_max_output_tokens INTEGER, model_nodes JSONB, model_updated_at TIMESTAMPTZ,
    reserved_output_tokens INTEGER, worst_case_micro_dzd BIGINT,
    hold_id TEXT, hold_amount_micro_dzd BIGINT, hold_expires_at TIMESTAMPTZ, hold_status TEXT,
    refused_media_kind TEXT, model_input_modalities TEXT[], model_image_tokens INTEGER,
    model_remote_images BOOLEAN,
    budget_scope TEXT, budget_limit BIGINT, budget_spent BIGINT, budget_reserved BIGINT,
    budget_period TEXT, budget_resets_at TIMESTAMPTZ,
    key_requests_per_minute INTEGER, key_window_count INTEGER,
    token_requests_per_minute INTEGER, token_window_count INTEGER,
    key_tokens_per_minute BIGINT, key_tokens_used BIGINT,
    token_tokens_per_minute BIGINT, token_tokens_used BIGINT, rate_tokens BIGINT
)
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    a RECORD;
    t RECORD;
    m RECORD;
    h RECORD;
    available BIGINT;
    registered BOOLEAN;
    allowed TEXT[];
    token_limit_now BIGINT;
    kb RECORD;
    tb RECORD;
    key_budget TEXT;
    token_budget TEXT;
    hold_created_at TIMESTAMPTZ := p_now;
BEGIN
    -- 1. The credential's rows (401), then suspension (403). Nothing counted yet.
    IF p_key_digest IS NOT NULL THEN
        SELECT ac.id, ac.status::text AS status, ac.rate_limit_per_minute,
               ac.webhook_format::text AS webhook_format, k.name, k.key_digest, k.id AS key_id,
               k.requests_per_minute, k.tokens_per_minute
          INTO a
          FROM api_keys k JOIN accounts ac ON ac.id = k.account_id
         WHERE k.key_digest = p_key_digest;
        IF NOT FOUND THEN outcome := 'invalid_api_key'; RETURN NEXT; RETURN; END IF;
        key_digest := a.key_digest;
    ELSE
        SELECT ac.id, ac.status::text AS status, ac.rate_limit_per_minute,
               ac.webhook_format::text AS webhook_format, k.name, k.key_digest, k.id AS key_id,
               k.requests_per_minute, k.tokens_per_minute
          INTO a
          FROM api_keys k JOIN accounts ac ON ac.id = k.account_id
         WHERE k.id = p_signing_key_id AND k.account_id = p_account_id
           AND k.key_digest = p_signing_key_digest;
        IF NOT FOUND THEN outcome := 'key_changed'; RETURN NEXT; RETURN; END IF;
        SELECT s.id, s.account_id, s.api_key_name, s.models, s.spending_limit_micro_dzd,
               s.expires_at, s.revoked_at, s.requests_per_minute, s.tokens_per_minute
          INTO t FROM scoped_tokens s WHERE s.digest = p_token_digest;
        registered := FOUND;
        IF registered THEN
            IF t.account_id <> a.id OR t.api_key_name <> a.name THEN
                outcome := 'token_mismatch'; RETURN NEXT; RETURN;
            END IF;
            IF t.revoked_at IS NOT NULL THEN
                outcome := 'token_revoked'; RETURN NEXT; RETURN;
            END IF;
            -- Once registered, the registry row is authoritative.
            token_id := t.id;
            token_models := NULLIF(t.models, ARRAY[]::text[]);
            token_limit := t.spending_limit_micro_dzd;
            token_expires_at := t.expires_at;
            token_requests_per_minute := t.requests_per_minute;
            token_tokens_per_minute := t.tokens_per_minute;
        ELSE
            token_models := p_token_models;
            token_limit := p_token_limit;
            token_expires_at := p_token_expires_at;
        END IF;
    END IF;
    account_id := a.id; api_key_name := a.name; account_status := a.status;
    rate_limit_per_minute := a.rate_limit_per_minute; webhook_format := a.webhook_format;
    IF a.status = 'suspended' THEN outcome := 'account_suspended'; RETURN NEXT; RETURN; END IF;

    -- 2. Rate limits: counted (and committed) whatever follows; the account's window, then the
    --    key's and the token's own when they have a limit (every applicable window counts).
    INSERT INTO rate_limit_windows AS w (account_id, window_start_ms, count)
    VALUES (a.id, p_window_start_ms, 1)
    ON CONFLICT ON CONSTRAINT rate_limit_windows_pkey DO UPDATE SET count = w.count + 1
    RETURNING w.count INTO window_count;
    IF window_count = 1 THEN
        DELETE FROM rate_limit_windows w
         WHERE w.account_id = a.id AND w.window_start_ms < p_window_start_ms;
    END IF;
    key_requests_per_minute := a.requests_per_minute;
    key_tokens_per_minute := a.tokens_per_minute;
    IF key_requests_per_minute IS NOT NULL THEN
        key_window_count := billing_count_key_request(a.key_id, p_window_start_ms);
    END IF;
    IF token_requests_per_minute IS NOT NULL THEN
        token_window_count := billing_count_key_request(token_id, p_window_start_ms);
    END IF;
    IF window_count > a.rate_limit_per_minute OR key_window_count > key_requests_per_minute
       OR token_window_count > token_requests_per_minute THEN
        outcome := 'rate_limit_exceeded'; RETURN NEXT; RETURN;
    END IF;

    -- 3. Model, of a provider and kind the endpoint serves (404), parameters (400), the token's
    --    model list (403).
    SELECT mm.id, mm.kind::text AS kind, mm.provider::text AS provider,
           mm.protocol::text AS protocol, mm.upstream_model, mm.input_price_micro_dzd_per_m,
           mm.output_price_micro_dzd_per_m, mm.max_output_tokens, mm.nodes, mm.updated_at,
           mm.input_modalities, mm.image_tokens, mm.remote_images
      INTO m FROM models mm WHERE mm.id = p_model;
    IF NOT FOUND THEN outcome := 'model_not_found'; RETURN NEXT; RETURN; END IF;
    model_id := m.id; model_kind := m.kind; model_provider := m.provider;
    model_protocol := m.protocol; model_upstream := m.upstream_model;
    model_input_price := m.input_price_micro_dzd_per_m;
    model_output_price := m.output_price_micro_dzd_per_m;
    model_max_output_tokens := m.max_output_tokens; model_nodes := m.nodes;
    model_updated_at := m.updated_at; model_input_modalities := m.input_modalities;
    model_image_tokens := m.image_tokens; model_remote_images := m.remote_images;
    IF (p_providers IS NOT NULL AND NOT m.provider = ANY(p_providers))
       OR (p_kinds IS NOT NULL AND NOT m.kind = ANY(p_kinds)) THEN
        outcome := 'model_not_on_endpoint'; RETURN NEXT; RETURN;
    END IF;
    IF p_node_unsupported IS NOT NULL AND m.provider = 'node' THEN
        outcome := 'unsupported_parameter'; RETURN NEXT; RETURN;
    END IF;
    -- Content the model does not declare (400 naming the first such part): images need the
    -- `image` modality, remote image URLs also `remote_images`.
    SELECT k INTO refused_media_kind
      FROM unnest(COALESCE(p_media_kinds, ARRAY[]::text[])) WITH ORDINALITY AS u(k, i)
     WHERE NOT CASE k WHEN 'remote_image' THEN 'image' = ANY(m.input_modalities) AND m.remote_images
                      ELSE k = ANY(m.input_modalities) END
     ORDER BY i LIMIT 1;
    IF refused_media_kind IS NOT NULL THEN
        outcome := 'unsupported_content'; RETURN NEXT; RETURN;
    END IF;
    allowed := token_models;
    IF p_key_digest IS NULL AND allowed IS NOT NULL AND NOT m.id = ANY(allowed) THEN
        outcome := 'model_not_allowed'; RETURN NEXT; RETURN;
    END IF;

    -- 4. The worst case, at the prices the hold will snapshot; every image counts the model's
    --    per-image ceiling as input.
    reserved_output_tokens :=
        LEAST(COALESCE(p_max_output_tokens, m.max_output_tokens), m.max_output_tokens) * p_choices;
    worst_case_micro_dzd := billing_worst_case_micro_dzd(
        p_input_tokens + COALESCE(p_image_count, 0)::bigint * m.image_tokens,
        p_max_output_tokens, p_choices, m.max_output_tokens,
        m.input_price_micro_dzd_per_m, m.output_price_micro_dzd_per_m, p_priority)::bigint;

    -- 5. The hold: the balance row first (serialises the account's admissions), then an existing
    --    hold of this id (idempotent retry), then the token row.
    SELECT b.posted_credits_micro_dzd - b.posted_debits_micro_dzd - b.pending_micro_dzd
      INTO available FROM account_balances b WHERE b.account_id = a.id FOR UPDATE;
    SELECT hh.id, hh.account_id, hh.amount_micro_dzd, hh.expires_at, hh.status::text AS status
      INTO h FROM holds hh WHERE hh.id = p_hold_id;
    IF FOUND THEN
        hold_id := h.id; hold_amount_micro_dzd := h.amount_micro_dzd;
        hold_expires_at := h.expires_at; hold_status := h.status;
        outcome := CASE WHEN h.account_id = a.id THEN 'replayed' ELSE 'hold_id_taken' END;
        RETURN NEXT; RETURN;
    END IF;
    IF p_key_digest IS NULL THEN
        -- Locked now (revoked, or registered by someone else, since the read above).
        SELECT s.id, s.account_id, s.api_key_name, s.spending_limit_micro_dzd, s.spent_micro_dzd,
               s.reserved_micro_dzd, s.revoked_at
          INTO t FROM scoped_tokens s WHERE s.digest = p_token_digest FOR UPDATE;
        registered := FOUND;
        IF registered THEN
            IF t.account_id <> a.id OR t.api_key_name <> a.name THEN
                outcome := 'token_mismatch'; RETURN NEXT; RETURN;
            END IF;
            IF t.revoked_at IS NOT NULL THEN
                outcome := 'token_revoked'; RETURN NEXT; RETURN;
            END IF;
            token_id := t.id; token_limit_now := t.spending_limit_micro_dzd;
            token_spent := t.spent_micro_dzd; token_reserved := t.reserved_micro_dzd;
        ELSE
            token_limit_now := p_token_limit; token_spent := 0; token_reserved := 0;
        END IF;
        IF token_limit_now IS NOT NULL AND (token_spent >= token_limit_now
             OR token_spent + token_reserved + worst_case_micro_dzd > token_limit_now) THEN
            token_limit := token_limit_now;
            outcome := 'budget_exhausted'; RETURN NEXT; RETURN;
        END IF;
    END IF;
    -- 5b. Tokens per minute: the request's tokens (the prompt, its images' ceiling, the output
    --     cap × n: what the hold is sized for) must fit in the key's and the token's windows,
    --     whose rows stay locked until commit; counted with the hold below. After the replay
    --     check, so a retried admission is answered, never counted twice.
    rate_tokens := p_input_tokens + COALESCE(p_image_count, 0)::bigint * m.image_tokens
                   + reserved_output_tokens;
    IF key_tokens_per_minute IS NOT NULL THEN
        key_tokens_used := billing_key_tokens_used(a.key_id, p_window_start_ms);
    END IF;
    IF token_tokens_per_minute IS NOT NULL THEN
        token_tokens_used := billing_key_tokens_used(token_id, p_window_start_ms);
    END IF;
    IF key_tokens_used + rate_tokens > key_tokens_per_minute
       OR token_tokens_used + rate_tokens > token_tokens_per_minute THEN
        outcome := 'rate_limit_exceeded'; RETURN NEXT; RETURN;
    END IF;
    -- 6. Budgets (after the balance and token rows: the lock order of every path that ends a
    --    hold), the key's then the token's: a window whose period boundary passed starts over.
    --    What is spent in the window plus what is held must leave room for the worst case.
    SELECT bb.id, bb.limit_micro_dzd, bb.period, bb.time_zone, bb.window_start,
           bb.spent_micro_dzd, bb.reserved_micro_dzd
      INTO kb FROM budgets bb WHERE bb.api_key_id = a.key_id FOR UPDATE;
    IF FOUND THEN
        key_budget := kb.id;
        IF billing_budget_window_start(kb.period, kb.time_zone, p_now) > kb.window_start THEN
            kb.window_start := billing_budget_window_start(kb.period, kb.time_zone, p_now);
            kb.spent_micro_dzd := 0;
            UPDATE budgets SET window_start = kb.window_start, spent_micro_dzd = 0, updated_at = p_now
             WHERE id = kb.id;
        END IF;
        IF kb.spent_micro_dzd + kb.reserved_micro_dzd + worst_case_micro_dzd > kb.limit_micro_dzd THEN
            budget_scope := 'api_key'; budget_limit := kb.limit_micro_dzd;
            budget_spent := kb.spent_micro_dzd; budget_reserved := kb.reserved_micro_dzd;
            budget_period := kb.period;
            budget_resets_at := billing_budget_resets_at(kb.period, kb.time_zone, kb.window_start);
            outcome := 'budget_exhausted'; RETURN NEXT; RETURN;
        END IF;
    END IF;
    IF p_key_digest IS NULL AND registered THEN
        SELECT bb.id, bb.limit_micro_dzd, bb.period, bb.time_zone, bb.window_start,
               bb.spent_micro_dzd, bb.reserved_micro_dzd
          INTO tb FROM budgets bb WHERE bb.scoped_token_id = token_id FOR UPDATE;
        IF FOUND THEN
            token_budget := tb.id;
            IF billing_budget_window_start(tb.period, tb.time_zone, p_now) > tb.window_start THEN
                tb.window_start := billing_budget_window_start(tb.period, tb.time_zone, p_now);
                tb.spent_micro_dzd := 0;
                UPDATE budgets SET window_start = tb.window_start, spent_micro_dzd = 0,
                                   updated_at = p_now
                 WHERE id = tb.id;
            END IF;
            IF tb.spent_micro_dzd + tb.reserved_micro_dzd + worst_case_micro_dzd
                   > tb.limit_micro_dzd THEN
                budget_scope := 'scoped_token'; budget_limit := tb.limit_micro_dzd;
                budget_spent := tb.spent_micro_dzd; budget_reserved := tb.reserved_micro_dzd;
                budget_period := tb.period;
                budget_resets_at := billing_budget_resets_at(tb.period, tb.time_zone, tb.window_start);
                outcome := 'budget_exhausted'; RETURN NEXT; RETURN;
            END IF;
        END IF;
    END IF;
    IF available IS NULL OR available <= 0 OR available < worst_case_micro_dzd THEN
        outcome := 'insufficient_balance'; RETURN NEXT; RETURN;
    END IF;
    -- The hold belongs to the windows it was checked against: a request whose clock read came
    -- just before a window began (another replica rolled it, or a budget change) is dated at the
    -- window's start, so its cost counts there (holds_budget_end) and is never lost between windows.
    IF key_budget IS NOT NULL THEN hold_created_at := GREATEST(hold_created_at, kb.window_start); END IF;
    IF token_budget IS NOT NULL THEN
        hold_created_at := GREATEST(hold_created_at, tb.window_start);
    END IF;
    IF p_key_digest IS NULL AND NOT registered THEN
        -- A client-minted token is registered with its first hold, nowhere earlier. A
        -- concurrent revocation may register it first: it then exists, revoked.
        INSERT INTO scoped_tokens (id, digest, account_id, api_key_name, models, expires_at,
                                   spending_limit_micro_dzd, origin, created_at)
        VALUES (p_new_token_id, p_token_digest, a.id, a.name,
                COALESCE(p_token_models, ARRAY[]::text[]), p_token_expires_at, p_token_limit,
                'client', p_now)
        ON CONFLICT (digest) DO NOTHING
        RETURNING id INTO token_id;
        IF token_id IS NULL THEN
            outcome := 'token_revoked'; RETURN NEXT; RETURN;
        END IF;
    END IF;
    INSERT INTO holds (id, account_id, scoped_token_id, amount_micro_dzd, status, model,
                       input_price_micro_dzd_per_m, output_price_micro_dzd_per_m, priority,
                       expires_at, created_at, key_budget_id, token_budget_id, rate_tokens,
                       rate_window_start_ms, rate_key_id, rate_token_id)
    VALUES (p_hold_id, a.id, token_id, worst_case_micro_dzd, 'pending', m.id,
            m.input_price_micro_dzd_per_m, m.output_price_micro_dzd_per_m, p_priority,
            p_hold_expires_at, hold_created_at, key_budget, token_budget,
            CASE WHEN key_tokens_used IS NOT NULL OR token_tokens_used IS NOT NULL
                 THEN rate_tokens END,
            CASE WHEN key_tokens_used IS NOT NULL OR token_tokens_used IS NOT NULL
                 THEN p_window_start_ms END,
            CASE WHEN key_tokens_used IS NOT NULL THEN a.key_id END,
            CASE WHEN token_tokens_used IS NOT NULL THEN token_id END);
    UPDATE account_balances b
       SET pending_micro_dzd = b.pending_micro_dzd + worst_case_micro_dzd, updated_at = now()
     WHERE b.account_id = a.id;
    IF token_id IS NOT NULL THEN
        UPDATE scoped_tokens s SET reserved_micro_dzd = s.reserved_micro_dzd + worst_case_micro_dzd
         WHERE s.id = token_id;
    END IF;
    IF key_budget IS NOT NULL OR token_budget IS NOT NULL THEN
        -- Released, and the cost counted, by holds_budget_end when the hold ends.
        UPDATE budgets SET reserved_micro_dzd = reserved_micro_dzd + worst_case_micro_dzd
         WHERE id IN (key_budget, token_budget);
    END IF;
    IF key_tokens_used IS NOT NULL OR token_tokens_used IS NOT NULL THEN
        -- Given back, the part the hold did not use, by holds_rate_end when it ends.
        UPDATE key_token_windows w SET tokens = w.tokens + rate_tokens
         WHERE w.window_start_ms = p_window_start_ms
           AND w.owner_id IN (CASE WHEN key_tokens_used IS NOT NULL THEN a.key_id END,
                              CASE WHEN token_tokens_used IS NOT NULL THEN token_id END);
    END IF;
    hold_id := p_hold_id; hold_amount_micro_dzd := worst_case_micro_dzd;
    hold_expires_at := p_hold_expires_at; hold_status := 'pending';
    outcome := 'admitted';
    RETURN NEXT;
END;
$$;
