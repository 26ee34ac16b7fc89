-- ledger_settle_pending_holds: its live definition. To change it: README.md in this directory.
--
-- The common case of ledger_settle_holds, set-based: a batch whose items are each a distinct
-- pending hold with its prices, settled by a distinct transaction id with its token counts
-- reported. Then the batch costs one statement per table (holds, journal transactions, journal
-- entries, balances, tokens) instead of a loop of statements per item in a subtransaction each,
-- and its rows and outcomes are those the loop gives: the same costs, references, legs and
-- balances after each item, in the loop's order (account, hold id, position).
-- ledger_settle_holds offers it batches of two or more only: for one item, the loop's few
-- statements cost less than these (0.3 ms of PostgreSQL's CPU per settlement less, measured
-- with services/billing/bench/holds.mjs).
-- Any other batch returns no row and writes nothing: ledger_settle_holds then runs its loop,
-- which also reports what this one does not (replays, conflicts, released holds, errors). An
-- error here (a balance row missing, a constraint) rolls back the whole attempt in the caller,
-- which then settles the batch item by item.
-- Locks: the batch's holds by id, then its balance rows by account, then its tokens by id. A
-- token's row is only ever locked after its account's balance row (on every path that ends or
-- places a hold), so taking all balances before all tokens cannot deadlock with the loop's
-- order (balance, token, next balance). The balances and tokens are locked only once the holds
-- are settled and the journal written (two statements, not one): admissions wait for those
-- rows, and with them locked first, about half of the ledger's statement time at batch scale
-- was admissions and settlements waiting for each other (docs/benchmarks.md, 2026-12-02).
-- Plans: every row here is found by its key, from the batch's arrays: the tables are reached
-- through a LATERAL subquery that selects by key alone and that the planner may not flatten or
-- push a condition into (OFFSET 0), or by `= ANY (ids)`. The generic plan (planned for ten
-- items) of a young database, whose statistics say its tables are tiny, otherwise read all
-- pending holds through their status index on every call (a join driven from the table, or a
-- status condition beside the key). The planner settings keep it off full scans as well.
CREATE OR REPLACE FUNCTION "ledger_settle_pending_holds"(
    hold_ids TEXT[], input_tokens BIGINT[], output_tokens BIGINT[], transaction_ids TEXT[],
    settled_at TIMESTAMPTZ
) RETURNS TABLE (
    ord INTEGER, outcome TEXT, hold_id TEXT, account_id TEXT, status TEXT, model TEXT,
    amount_micro_dzd BIGINT, cost_micro_dzd BIGINT, transaction_id TEXT,
    expires_at TIMESTAMPTZ, finalized_at TIMESTAMPTZ,
    credits BIGINT, debits BIGINT, pending BIGINT, error_state TEXT, error_message TEXT
)
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $$
DECLARE
    n INTEGER := COALESCE(array_length(hold_ids, 1), 0);
    eligible INTEGER;
    written BIGINT;
    returned BIGINT;
    accounts TEXT[];
    tokens TEXT[];
BEGIN
    IF array_length(input_tokens, 1) IS DISTINCT FROM n
       OR array_length(output_tokens, 1) IS DISTINCT FROM n
       OR array_length(transaction_ids, 1) IS DISTINCT FROM n
       OR EXISTS (SELECT 1 FROM unnest(input_tokens, output_tokens, transaction_ids)
                                AS u(tokens_in, tokens_out, txn)
                   WHERE u.txn IS NULL OR u.tokens_in IS NULL OR u.tokens_out IS NULL
                      OR u.tokens_in < 0 OR u.tokens_out < 0)
       OR (SELECT count(DISTINCT u.txn) FROM unnest(transaction_ids) AS u(txn)) <> n THEN
        RETURN;
    END IF;
    -- One pass over the batch's holds: locked in id order, and what decides the attempt taken
    -- as they are locked (each pending and priced; n of them, so the ids are distinct), with the
    -- accounts and tokens whose rows the batch moves.
    SELECT count(*) FILTER (WHERE l.status = 'pending' AND l.in_price IS NOT NULL
                                  AND l.out_price IS NOT NULL),
           array_agg(DISTINCT l.account_id), array_agg(DISTINCT l.scoped_token_id)
      INTO eligible, accounts, tokens
      FROM (SELECT hh.status, hh.account_id, hh.scoped_token_id,
                   COALESCE(hh.input_price_micro_dzd_per_m, m.input_price_micro_dzd_per_m)
                       AS in_price,
                   COALESCE(hh.output_price_micro_dzd_per_m, m.output_price_micro_dzd_per_m)
                       AS out_price
              FROM holds hh LEFT JOIN models m ON m.id = hh.model
             WHERE hh.id = ANY (hold_ids)
             ORDER BY hh.id FOR UPDATE OF hh) l;
    IF eligible <> n THEN
        RETURN;
    END IF;
    -- The holds settled and the journal written, with no balance or token row locked yet.
    WITH item AS (
        SELECT u.i::integer AS i, u.id, u.tokens_in, u.tokens_out, u.txn, h.account_id,
               h.scoped_token_id, h.amount_micro_dzd AS held, h.model, h.priority, h.expires_at,
               ledger_cost_micro_dzd(u.tokens_in, u.tokens_out, h.in_price, h.out_price,
                                     h.priority) AS usage_cost
          FROM unnest(hold_ids, input_tokens, output_tokens, transaction_ids)
               WITH ORDINALITY AS u(id, tokens_in, tokens_out, txn, i)
         CROSS JOIN LATERAL (
               SELECT hh.*,
                      COALESCE(hh.input_price_micro_dzd_per_m,
                               m.input_price_micro_dzd_per_m) AS in_price,
                      COALESCE(hh.output_price_micro_dzd_per_m,
                               m.output_price_micro_dzd_per_m) AS out_price
                 FROM holds hh LEFT JOIN models m ON m.id = hh.model
                WHERE hh.id = u.id OFFSET 0) h
    ), priced AS (
        SELECT item.*, LEAST(item.usage_cost, item.held)::bigint AS cost FROM item
    ), settled AS (
        -- A node that reported more than was held is charged the hold, and the difference is
        -- recorded, never silently dropped.
        UPDATE holds x
           SET status = 'settled', settled_amount_micro_dzd = p.cost, finalized_at = settled_at,
               uncapped_cost_micro_dzd = CASE WHEN p.usage_cost > p.cost
                                              THEN LEAST(p.usage_cost, 9223372036854775807)::bigint
                                         END
          FROM priced p
         WHERE x.id = ANY (hold_ids) AND x.id = p.id
        RETURNING x.id
    ), journal AS (
        INSERT INTO ledger_transactions (id, kind, account_id, reference, hold_id, created_at)
        SELECT p.txn, 'hold_settlement', p.account_id,
               p.model || ': ' || p.tokens_in || ' in + ' || p.tokens_out || ' out tokens'
                   || CASE WHEN p.priority THEN ', priority' ELSE '' END
                   || CASE WHEN p.usage_cost > p.cost
                           THEN ', capped at the hold (usage cost ' || p.usage_cost || ' µDZD)'
                           ELSE '' END,
               p.id, settled_at
          FROM priced p
        RETURNING id
    ), legs AS (
        -- Every leg of the batch in one INSERT: the balance check runs per statement, per
        -- journal transaction.
        INSERT INTO ledger_entries (transaction_id, ledger_account, account_id, amount_micro_dzd,
                                    created_at)
        SELECT j.id, l.ledger_account, l.account_id, l.amount, settled_at
          FROM journal j
          JOIN priced p ON p.txn = j.id
         CROSS JOIN LATERAL (VALUES ('customer:' || p.account_id, p.account_id, -p.cost),
                                    ('system:revenue', NULL, p.cost))
                            AS l(ledger_account, account_id, amount)
         WHERE p.cost > 0
    )
    SELECT count(*) INTO written FROM settled;
    IF written <> n THEN
        RAISE EXCEPTION 'ledger_settle_pending_holds: % holds settled for % items', written, n;
    END IF;
    -- Then the balances and tokens, locked in order, moved, and the answer with the balance
    -- after each item. The costs are read back from the holds just settled.
    PERFORM 1 FROM account_balances b WHERE b.account_id = ANY (accounts)
     ORDER BY b.account_id FOR UPDATE;
    PERFORM 1 FROM scoped_tokens s WHERE s.id = ANY (tokens) ORDER BY s.id FOR UPDATE;
    RETURN QUERY
    WITH priced AS (
        SELECT u.i::integer AS i, u.id, u.txn, h.account_id, h.scoped_token_id,
               h.amount_micro_dzd AS held, h.settled_amount_micro_dzd AS cost, h.model,
               h.expires_at
          FROM unnest(hold_ids, transaction_ids) WITH ORDINALITY AS u(id, txn, i)
         CROSS JOIN LATERAL (SELECT hh.* FROM holds hh WHERE hh.id = u.id OFFSET 0) h
    ), balance AS (
        UPDATE account_balances b
           SET posted_debits_micro_dzd = b.posted_debits_micro_dzd + s.cost,
               pending_micro_dzd = b.pending_micro_dzd - s.held,
               updated_at = now()
          FROM (SELECT p.account_id, sum(p.cost) AS cost, sum(p.held) AS held
                  FROM priced p GROUP BY p.account_id) s
         WHERE b.account_id = ANY (accounts) AND b.account_id = s.account_id
        RETURNING b.account_id, b.posted_credits_micro_dzd, b.posted_debits_micro_dzd,
                  b.pending_micro_dzd
    ), token AS (
        UPDATE scoped_tokens st
           SET spent_micro_dzd = st.spent_micro_dzd + s.cost,
               reserved_micro_dzd = st.reserved_micro_dzd - s.held
          FROM (SELECT p.scoped_token_id, sum(p.cost) AS cost, sum(p.held) AS held
                  FROM priced p WHERE p.scoped_token_id IS NOT NULL
                 GROUP BY p.scoped_token_id) s
         WHERE st.id = ANY (tokens) AND st.id = s.scoped_token_id
    ), ordered AS (
        -- What the balance was after each item, in the loop's order: the batch's final balance
        -- less what the account's later items moved.
        SELECT p.*,
               COALESCE(sum(p.cost) OVER later, 0) AS cost_after,
               COALESCE(sum(p.held) OVER later, 0) AS held_after,
               row_number() OVER (ORDER BY p.account_id, p.id, p.i) AS position
          FROM priced p
        WINDOW later AS (PARTITION BY p.account_id ORDER BY p.id, p.i
                         ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)
    )
    SELECT o.i, 'settled', o.id, o.account_id, 'settled', o.model, o.held, o.cost, o.txn,
           o.expires_at, settled_at, b.posted_credits_micro_dzd,
           (b.posted_debits_micro_dzd - o.cost_after)::bigint,
           (b.pending_micro_dzd + o.held_after)::bigint,
           NULL::text, NULL::text
      FROM ordered o
      JOIN balance b ON b.account_id = o.account_id
     ORDER BY o.position;
    -- One row per item, or the attempt fails (and the caller's loop reports why, per item): an
    -- item whose account has no balance row has no row here.
    GET DIAGNOSTICS returned = ROW_COUNT;
    IF returned <> n THEN
        RAISE EXCEPTION 'ledger_settle_pending_holds: % rows for % items', returned, n;
    END IF;
END;
$$;
