-- Admission as steps: the one 336-line billing_admit_v4 becomes short functions of one concern
-- each (their live sources: prisma/functions/billing_admission_*.sql and billing_admit_v5.sql)
-- over two composite types, the request and the admission's state, which is also the answer's
-- row. A new money rule changes one step (or adds one to billing_admit_v5) and, when it needs
-- fields, adds them to `billing_admission` with ALTER TYPE ... ADD ATTRIBUTE: callers read
-- columns by name, so a billing of the previous release ignores them.
--
-- Versions kept for a rolling update: the previous release's function stays one release
-- (billing_admit_v4 and billing_admit_with_context_v4, which the release before this one
-- calls); the one before it (v3) is dropped here.

-- What a caller asks: one admission (billing's batch statement reads these from JSON by name).
CREATE TYPE "billing_admission_request" AS (
    key_digest TEXT,              -- API key: SHA-256 hex of the key (NULL for a scoped token)
    account_id TEXT,              -- scoped token: the kid's account
    signing_key_id TEXT,          -- scoped token: api_keys.id the signature verified with
    signing_key_digest TEXT,      --   and that row's key_digest then
    token_digest TEXT,            -- scoped token: SHA-256 hex of the full `jwt:...` string
    token_models TEXT[],          --   claims, used to register a client-minted token (NULL = any)
    token_limit BIGINT,           --   (NULL = no limit)
    token_expires_at TIMESTAMPTZ,
    new_token_id TEXT,            --   registry id if it registers now
    window_start_ms BIGINT,       -- the rate windows' minute
    model TEXT,
    input_tokens BIGINT, max_output_tokens BIGINT, choices INTEGER, priority BOOLEAN,
    providers TEXT[], kinds TEXT[],   -- what the endpoint serves (NULL = any)
    node_unsupported TEXT,        -- a parameter default models refuse
    media_kinds TEXT[],           -- content beyond text, in request order
    image_count INTEGER,          -- image parts: each adds the model's image_tokens
    hold_id TEXT, hold_expires_at TIMESTAMPTZ, now_at TIMESTAMPTZ,
    endpoint TEXT, request_id TEXT    -- kept on the hold for its usage record
);

-- The admission's state as the steps fill it, and the answer's row: `outcome` is NULL until a
-- step decides (a refusal, `replayed`, or `admitted`). The last six fields are the steps' own.
CREATE TYPE "billing_admission" AS (
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
    token_tokens_per_minute BIGINT, token_tokens_used BIGINT, rate_tokens BIGINT,
    key_id TEXT, registered BOOLEAN, available_micro_dzd BIGINT,
    key_budget_id TEXT, token_budget_id TEXT, hold_created_at TIMESTAMPTZ
);

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
               k.requests_per_minute, k.tokens_per_minute
          INTO a
          FROM api_keys k JOIN accounts ac ON ac.id = k.account_id
         WHERE k.key_digest = r.key_digest;
        IF NOT FOUND THEN adm.outcome := 'invalid_api_key'; RETURN adm; END IF;
        adm.key_digest := a.key_digest;
    ELSE
        SELECT ac.id, ac.status::text AS status, ac.rate_limit_per_minute,
               ac.webhook_format::text AS webhook_format, k.name, k.key_digest, k.id AS key_id,
               k.requests_per_minute, k.tokens_per_minute
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
    IF a.status = 'suspended' THEN adm.outcome := 'account_suspended'; END IF;
    RETURN adm;
END;
$$;

-- billing_admission_requests: its live definition. To change it: README.md in this directory.
--
-- Admission, step 2 (billing_admit_v5): the request counted (and committed, whatever follows)
-- in the account's one-minute window, and in the key's and the token's own when they have a
-- requests-per-minute limit; refused when any of them is over. Windows before this one are
-- pruned when it opens.
CREATE OR REPLACE FUNCTION "billing_admission_requests"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
BEGIN
    INSERT INTO rate_limit_windows AS w (account_id, window_start_ms, count)
    VALUES (adm.account_id, r.window_start_ms, 1)
    ON CONFLICT ON CONSTRAINT rate_limit_windows_pkey DO UPDATE SET count = w.count + 1
    RETURNING w.count INTO adm.window_count;
    IF adm.window_count = 1 THEN
        DELETE FROM rate_limit_windows w
         WHERE w.account_id = adm.account_id AND w.window_start_ms < r.window_start_ms;
    END IF;
    IF adm.key_requests_per_minute IS NOT NULL THEN
        adm.key_window_count := billing_count_key_request(adm.key_id, r.window_start_ms);
    END IF;
    IF adm.token_requests_per_minute IS NOT NULL THEN
        adm.token_window_count := billing_count_key_request(adm.token_id, r.window_start_ms);
    END IF;
    IF adm.window_count > adm.rate_limit_per_minute
       OR adm.key_window_count > adm.key_requests_per_minute
       OR adm.token_window_count > adm.token_requests_per_minute THEN
        adm.outcome := 'rate_limit_exceeded';
    END IF;
    RETURN adm;
END;
$$;

-- billing_admission_model: its live definition. To change it: README.md in this directory.
--
-- Admission, step 3 (billing_admit_v5): the model, of a provider and kind the endpoint serves
-- (404); a parameter default models refuse (400); content the model does not declare (400
-- naming the first such part: images need the `image` modality, remote image URLs also
-- `remote_images`); the scoped token's model list (403).
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
    IF r.key_digest IS NULL AND adm.token_models IS NOT NULL AND NOT m.id = ANY(adm.token_models) THEN
        adm.outcome := 'model_not_allowed';
    END IF;
    RETURN adm;
END;
$$;

-- billing_admission_cost: its live definition. To change it: README.md in this directory.
--
-- Admission, step 4 (billing_admit_v5): the worst case, at the prices the hold will snapshot
-- (every image counts the model's per-image ceiling as input), and the request's tokens as the
-- tokens-per-minute windows count them: the prompt, its images' ceiling and the output cap × n,
-- what the hold is sized for. Refuses nothing.
CREATE OR REPLACE FUNCTION "billing_admission_cost"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    input_tokens BIGINT := r.input_tokens + COALESCE(r.image_count, 0)::bigint * adm.model_image_tokens;
BEGIN
    adm.reserved_output_tokens := LEAST(COALESCE(r.max_output_tokens, adm.model_max_output_tokens),
                                        adm.model_max_output_tokens) * r.choices;
    adm.worst_case_micro_dzd := billing_worst_case_micro_dzd(
        input_tokens, r.max_output_tokens, r.choices, adm.model_max_output_tokens,
        adm.model_input_price, adm.model_output_price, r.priority)::bigint;
    adm.rate_tokens := input_tokens + adm.reserved_output_tokens;
    RETURN adm;
END;
$$;

-- billing_admission_balance: its live definition. To change it: README.md in this directory.
--
-- Admission, step 5 (billing_admit_v5): the account's balance row, locked first of the money
-- rows (it serialises the account's admissions; the lock order of every path that ends a hold),
-- and what it leaves available; then a hold already placed under this id: a retried admission
-- is answered with it (`replayed`), another account's is `hold_id_taken`. Nothing reserved yet.
CREATE OR REPLACE FUNCTION "billing_admission_balance"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    h RECORD;
BEGIN
    SELECT b.posted_credits_micro_dzd - b.posted_debits_micro_dzd - b.pending_micro_dzd
      INTO adm.available_micro_dzd
      FROM account_balances b WHERE b.account_id = adm.account_id FOR UPDATE;
    SELECT hh.id, hh.account_id, hh.amount_micro_dzd, hh.expires_at, hh.status::text AS status
      INTO h FROM holds hh WHERE hh.id = r.hold_id;
    IF FOUND THEN
        adm.hold_id := h.id; adm.hold_amount_micro_dzd := h.amount_micro_dzd;
        adm.hold_expires_at := h.expires_at; adm.hold_status := h.status;
        adm.outcome := CASE WHEN h.account_id = adm.account_id THEN 'replayed' ELSE 'hold_id_taken' END;
    END IF;
    RETURN adm;
END;
$$;

-- billing_admission_token_limit: its live definition. To change it: README.md in this directory.
--
-- Admission, step 6 (billing_admit_v5): a scoped token's spending limit. Its registry row is
-- locked now (after the balance row) and read again: revoked, or registered by someone else,
-- since step 1. What it spent plus what it holds must leave room for the worst case (402). A
-- client-minted token not registered yet has spent nothing. API keys pass.
CREATE OR REPLACE FUNCTION "billing_admission_token_limit"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    t RECORD;
    limit_now BIGINT := r.token_limit;
BEGIN
    IF r.key_digest IS NOT NULL THEN RETURN adm; END IF;
    SELECT st.id, st.account_id, st.api_key_name, st.spending_limit_micro_dzd, st.spent_micro_dzd,
           st.reserved_micro_dzd, st.revoked_at
      INTO t FROM scoped_tokens st WHERE st.digest = r.token_digest FOR UPDATE;
    adm.registered := FOUND;
    adm.token_spent := 0; adm.token_reserved := 0;
    IF adm.registered THEN
        IF t.account_id <> adm.account_id OR t.api_key_name <> adm.api_key_name THEN
            adm.outcome := 'token_mismatch'; RETURN adm;
        END IF;
        IF t.revoked_at IS NOT NULL THEN adm.outcome := 'token_revoked'; RETURN adm; END IF;
        adm.token_id := t.id; limit_now := t.spending_limit_micro_dzd;
        adm.token_spent := t.spent_micro_dzd; adm.token_reserved := t.reserved_micro_dzd;
    END IF;
    IF limit_now IS NOT NULL AND (adm.token_spent >= limit_now
         OR adm.token_spent + adm.token_reserved + adm.worst_case_micro_dzd > limit_now) THEN
        adm.token_limit := limit_now;
        adm.outcome := 'budget_exhausted';
    END IF;
    RETURN adm;
END;
$$;

-- billing_admission_tokens_per_minute: its live definition. To change it: README.md in this directory.
--
-- Admission, step 7 (billing_admit_v5): the request's tokens must fit in the key's and the
-- token's one-minute tokens windows, when they have a limit; the windows' rows stay locked
-- until commit, and the hold counts its tokens there (step 9). After the replay check, so a
-- retried admission is answered, never counted twice.
CREATE OR REPLACE FUNCTION "billing_admission_tokens_per_minute"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
BEGIN
    IF adm.key_tokens_per_minute IS NOT NULL THEN
        adm.key_tokens_used := billing_key_tokens_used(adm.key_id, r.window_start_ms);
    END IF;
    IF adm.token_tokens_per_minute IS NOT NULL THEN
        adm.token_tokens_used := billing_key_tokens_used(adm.token_id, r.window_start_ms);
    END IF;
    IF adm.key_tokens_used + adm.rate_tokens > adm.key_tokens_per_minute
       OR adm.token_tokens_used + adm.rate_tokens > adm.token_tokens_per_minute THEN
        adm.outcome := 'rate_limit_exceeded';
    END IF;
    RETURN adm;
END;
$$;

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
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
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

-- billing_admission_budgets: its live definition. To change it: README.md in this directory.
--
-- Admission, step 8 (billing_admit_v5): the key's budget, then the registered token's, each
-- row locked (after the balance and token rows: the lock order of every path that ends a hold)
-- and checked by billing_admission_budget. The hold is dated no earlier than the windows it
-- was checked against.
CREATE OR REPLACE FUNCTION "billing_admission_budgets"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    bb budgets;
BEGIN
    adm.hold_created_at := r.now_at;
    SELECT * INTO bb FROM budgets WHERE api_key_id = adm.key_id FOR UPDATE;
    IF FOUND THEN
        adm := billing_admission_budget(adm, bb, 'api_key', r.now_at);
        IF adm.outcome IS NOT NULL THEN RETURN adm; END IF;
    END IF;
    IF r.key_digest IS NULL AND adm.registered THEN
        SELECT * INTO bb FROM budgets WHERE scoped_token_id = adm.token_id FOR UPDATE;
        IF FOUND THEN adm := billing_admission_budget(adm, bb, 'scoped_token', r.now_at); END IF;
    END IF;
    RETURN adm;
END;
$$;

-- billing_admission_hold: its live definition. To change it: README.md in this directory.
--
-- Admission, step 9 (billing_admit_v5): the balance must cover the worst case (402); a
-- client-minted token is registered with its first hold, nowhere earlier (a concurrent
-- revocation may have registered it first: it then exists, revoked); then the hold, at the
-- model's prices, and what it reserves: the balance's pending amount, the token's, the
-- budgets' (released, and the cost counted, by holds_budget_end when the hold ends) and the
-- tokens windows' (given back, the part unused, by holds_rate_end).
CREATE OR REPLACE FUNCTION "billing_admission_hold"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    amount BIGINT := adm.worst_case_micro_dzd;
    rated BOOLEAN := adm.key_tokens_used IS NOT NULL OR adm.token_tokens_used IS NOT NULL;
BEGIN
    IF adm.available_micro_dzd IS NULL OR adm.available_micro_dzd <= 0
       OR adm.available_micro_dzd < amount THEN
        adm.outcome := 'insufficient_balance'; RETURN adm;
    END IF;
    IF r.key_digest IS NULL AND NOT adm.registered THEN
        INSERT INTO scoped_tokens (id, digest, account_id, api_key_name, models, expires_at,
                                   spending_limit_micro_dzd, origin, created_at)
        VALUES (r.new_token_id, r.token_digest, adm.account_id, adm.api_key_name,
                COALESCE(r.token_models, ARRAY[]::text[]), r.token_expires_at, r.token_limit,
                'client', r.now_at)
        ON CONFLICT (digest) DO NOTHING
        RETURNING id INTO adm.token_id;
        IF adm.token_id IS NULL THEN adm.outcome := 'token_revoked'; RETURN adm; END IF;
    END IF;
    INSERT INTO holds (id, account_id, scoped_token_id, amount_micro_dzd, status, model,
                       input_price_micro_dzd_per_m, output_price_micro_dzd_per_m, priority,
                       expires_at, created_at, key_budget_id, token_budget_id, rate_tokens,
                       rate_window_start_ms, rate_key_id, rate_token_id)
    VALUES (r.hold_id, adm.account_id, adm.token_id, amount, 'pending', adm.model_id,
            adm.model_input_price, adm.model_output_price, r.priority, r.hold_expires_at,
            adm.hold_created_at, adm.key_budget_id, adm.token_budget_id,
            CASE WHEN rated THEN adm.rate_tokens END,
            CASE WHEN rated THEN r.window_start_ms END,
            CASE WHEN adm.key_tokens_used IS NOT NULL THEN adm.key_id END,
            CASE WHEN adm.token_tokens_used IS NOT NULL THEN adm.token_id END);
    UPDATE account_balances b
       SET pending_micro_dzd = b.pending_micro_dzd + amount, updated_at = now()
     WHERE b.account_id = adm.account_id;
    IF adm.token_id IS NOT NULL THEN
        UPDATE scoped_tokens st SET reserved_micro_dzd = st.reserved_micro_dzd + amount
         WHERE st.id = adm.token_id;
    END IF;
    IF adm.key_budget_id IS NOT NULL OR adm.token_budget_id IS NOT NULL THEN
        UPDATE budgets SET reserved_micro_dzd = reserved_micro_dzd + amount
         WHERE id IN (adm.key_budget_id, adm.token_budget_id);
    END IF;
    IF rated THEN
        UPDATE key_token_windows w SET tokens = w.tokens + adm.rate_tokens
         WHERE w.window_start_ms = r.window_start_ms
           AND w.owner_id IN (CASE WHEN adm.key_tokens_used IS NOT NULL THEN adm.key_id END,
                              CASE WHEN adm.token_tokens_used IS NOT NULL THEN adm.token_id END);
    END IF;
    adm.hold_id := r.hold_id; adm.hold_amount_micro_dzd := amount;
    adm.hold_expires_at := r.hold_expires_at; adm.hold_status := 'pending';
    adm.outcome := 'admitted';
    RETURN adm;
END;
$$;

-- billing_admit_v5: its live definition. To change it: README.md in this directory.
--
-- Admission of one request, as steps of one concern each over one state (the composite type
-- `billing_admission`, which is also the answer's row): who is calling, the requests windows,
-- the model, the cost, the balance row and a replay, the token's spending limit, tokens per
-- minute, budgets, the hold. The first step that decides an outcome ends it; a refusal after
-- the requests step has still counted the request. The request's context (endpoint, request
-- id, key) is set for the hold's usage record (holds_admission_context) for this call only.
-- A new money rule changes one step, or adds one here (the type gains its fields).
CREATE OR REPLACE FUNCTION "billing_admit_v5"(r billing_admission_request)
RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    adm billing_admission;
BEGIN
    PERFORM set_config('billing.admission_context',
                       json_build_object('hold_id', r.hold_id, 'endpoint', r.endpoint,
                                         'request_id', r.request_id, 'key_digest', r.key_digest,
                                         'signing_key_id', r.signing_key_id)::text,
                       true);
    adm := billing_admission_credential(r);
    IF adm.outcome IS NULL THEN adm := billing_admission_requests(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_model(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_cost(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_balance(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_token_limit(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_tokens_per_minute(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_budgets(r, adm); END IF;
    IF adm.outcome IS NULL THEN adm := billing_admission_hold(r, adm); END IF;
    PERFORM set_config('billing.admission_context', '', true);
    RETURN adm;
END;
$$;

-- Least privilege: only billing's runtime role may run them (src/db/runtime-grants.ts).
REVOKE ALL ON FUNCTION "billing_admission_credential"("billing_admission_request") FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_requests"("billing_admission_request", "billing_admission") FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_model"("billing_admission_request", "billing_admission") FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_cost"("billing_admission_request", "billing_admission") FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_balance"("billing_admission_request", "billing_admission") FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_token_limit"("billing_admission_request", "billing_admission") FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_tokens_per_minute"("billing_admission_request", "billing_admission") FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_budget"("billing_admission", "budgets", TEXT, TIMESTAMPTZ) FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_budgets"("billing_admission_request", "billing_admission") FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admission_hold"("billing_admission_request", "billing_admission") FROM PUBLIC;
REVOKE ALL ON FUNCTION "billing_admit_v5"("billing_admission_request") FROM PUBLIC;

-- Two releases back: no billing calls them any more.
DROP FUNCTION "billing_admit_with_context_v3"(TEXT, TEXT, TEXT, TEXT, TEXT, TEXT[], BIGINT, TIMESTAMPTZ, TEXT, BIGINT, TEXT, BIGINT, BIGINT, INTEGER, BOOLEAN, TEXT[], TEXT[], TEXT, TEXT[], INTEGER, TEXT, TIMESTAMPTZ, TIMESTAMPTZ, TEXT, TEXT);
DROP FUNCTION "billing_admit_v3"(TEXT, TEXT, TEXT, TEXT, TEXT, TEXT[], BIGINT, TIMESTAMPTZ, TEXT, BIGINT, TEXT, BIGINT, BIGINT, INTEGER, BOOLEAN, TEXT[], TEXT[], TEXT, TEXT[], INTEGER, TEXT, TIMESTAMPTZ, TIMESTAMPTZ);
