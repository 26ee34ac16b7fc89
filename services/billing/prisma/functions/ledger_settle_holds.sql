-- ledger_settle_holds: its live definition. To change it: README.md in this directory.
--
-- Settles a batch of holds in one statement (a batch of one is the unbatched case): the common
-- batch set-based (ledger_settle_pending_holds), any other item by item. Each item of the loop
-- runs in its own subtransaction (the EXCEPTION block): an item that fails is rolled back alone
-- and reported with its SQLSTATE, the others still settle. One row per item, `ord` = its
-- position (1-based) in the arrays. Lock order: all the batch's holds (by id), then the balance
-- and token rows item by item in (account, hold id) order, so concurrent batches, voids,
-- placements and sweeps take rows in the same order and cannot deadlock each other.
-- Outcomes: settled | replayed (already settled: the first result) | conflict (voided, or
-- expired at its TTL) | not_found | unpriced (no price snapshot and the model left the catalog)
-- | error.
-- A hold the sweeper released because its publish mark had not come within the grace (expired
-- before its expiry: `released_unpublished`) may still have run: the mark was held up, not the job. Its settlement is
-- charged what the account covers now (ledger_released_hold_cap), at most its usage and the
-- hold; the release already gave the hold's amount back, so nothing pending moves.
CREATE OR REPLACE FUNCTION "ledger_settle_holds"(
    hold_ids TEXT[], input_tokens BIGINT[], output_tokens BIGINT[], transaction_ids TEXT[],
    settled_at TIMESTAMPTZ
) RETURNS TABLE (
    ord INTEGER, outcome TEXT, hold_id TEXT, account_id TEXT, status TEXT, model TEXT,
    amount_micro_dzd BIGINT, cost_micro_dzd BIGINT, transaction_id TEXT,
    expires_at TIMESTAMPTZ, finalized_at TIMESTAMPTZ,
    credits BIGINT, debits BIGINT, pending BIGINT, error_state TEXT, error_message TEXT
)
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
-- Generic plans, planned once per session: for a batch of one, a custom plan looks cheaper than
-- the generic one (planned for ten items), so without this the holds' lock and the loop's query
-- were planned again on every call (0.17 ms of a settlement's 1.1 ms). Every statement here
-- finds its rows by primary key, whatever the batch.
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    item RECORD;
    h RECORD;
    cost BIGINT;
    usage_cost NUMERIC;
    released BOOLEAN;
    held BIGINT;
    locked_id TEXT;
    -- Two or more items: a batch to try set-based, to lock in order and to order by account. A
    -- batch of one (most settlements) needs none of it: its hold is locked first, below.
    batched BOOLEAN := cardinality(hold_ids) > 1;
BEGIN
    -- The common batch (two or more distinct pending, priced holds) set-based, in one attempt
    -- that either settles the whole batch or writes nothing; one item, any other batch, or an
    -- attempt that failed, is settled item by item below.
    IF batched THEN
        BEGIN
            RETURN QUERY SELECT * FROM ledger_settle_pending_holds(hold_ids, input_tokens,
                                                                   output_tokens, transaction_ids,
                                                                   settled_at);
            IF FOUND THEN RETURN; END IF;
        EXCEPTION WHEN OTHERS THEN
            NULL;
        END;
    END IF;
    -- Every hold of the batch first, in id order: the batch then never waits for a hold row
    -- while it holds a balance row (a sweeper holding that hold would wait for the balance).
    -- One primary-key lookup per hold: `id = ANY(hold_ids)` in a generic plan is a full scan
    -- while the table's statistics say it is small.
    IF batched THEN
        FOR locked_id IN SELECT DISTINCT u.id FROM unnest(hold_ids) AS u(id) ORDER BY u.id LOOP
            PERFORM 1 FROM holds WHERE id = locked_id FOR UPDATE;
        END LOOP;
    END IF;
    -- Each item's account is read by its primary key (a subquery per item), never by a join:
    -- the cached generic plan estimates ten items, and on a table whose statistics lag behind
    -- it (a young database) it chose a hash join over a full scan of holds, per batch.
    FOR item IN
        SELECT u.i, u.id, u.tokens_in, u.tokens_out, u.txn
          FROM unnest(hold_ids, input_tokens, output_tokens, transaction_ids)
               WITH ORDINALITY AS u(id, tokens_in, tokens_out, txn, i)
         ORDER BY CASE WHEN batched THEN (SELECT x.account_id FROM holds x WHERE x.id = u.id) END
                      NULLS LAST,
                  u.id, u.i
    LOOP
        ord := item.i; hold_id := item.id; outcome := NULL; account_id := NULL; status := NULL;
        model := NULL;
        amount_micro_dzd := NULL; cost_micro_dzd := NULL; transaction_id := NULL;
        expires_at := NULL; finalized_at := NULL; credits := NULL; debits := NULL;
        pending := NULL; error_state := NULL; error_message := NULL;
        BEGIN
            SELECT hh.account_id, hh.scoped_token_id, hh.amount_micro_dzd, hh.status::text AS status,
                   hh.settled_amount_micro_dzd, hh.model, hh.priority, hh.expires_at, hh.finalized_at,
                   hh.status = 'expired' AND hh.released_unpublished AS released,
                   COALESCE(hh.input_price_micro_dzd_per_m, m.input_price_micro_dzd_per_m) AS in_price,
                   COALESCE(hh.output_price_micro_dzd_per_m, m.output_price_micro_dzd_per_m) AS out_price
              INTO h
              FROM holds hh LEFT JOIN models m ON m.id = hh.model
             WHERE hh.id = item.id
               FOR UPDATE OF hh;
            IF NOT FOUND THEN
                outcome := 'not_found';
            ELSE
                account_id := h.account_id; status := h.status; amount_micro_dzd := h.amount_micro_dzd;
                model := h.model; expires_at := h.expires_at; finalized_at := h.finalized_at;
                cost_micro_dzd := h.settled_amount_micro_dzd;
                IF h.status = 'settled' THEN
                    outcome := 'replayed';
                    SELECT t.id INTO transaction_id FROM ledger_transactions t WHERE t.hold_id = item.id;
                    SELECT b.posted_credits_micro_dzd, b.posted_debits_micro_dzd, b.pending_micro_dzd
                      INTO credits, debits, pending
                      FROM account_balances b WHERE b.account_id = h.account_id;
                ELSIF h.status <> 'pending' AND NOT h.released THEN
                    outcome := 'conflict';
                ELSIF h.in_price IS NULL OR h.out_price IS NULL THEN
                    outcome := 'unpriced';
                ELSE
                    usage_cost := ledger_cost_micro_dzd(item.tokens_in, item.tokens_out,
                                                        h.in_price, h.out_price, h.priority);
                    cost := LEAST(usage_cost, h.amount_micro_dzd)::bigint;
                    released := h.released;
                    held := CASE WHEN released THEN 0 ELSE h.amount_micro_dzd END;
                    IF released THEN
                        cost := ledger_released_hold_cap(item.id, cost);
                    END IF;
                    -- A node that reported more than was held is charged the hold, and the
                    -- difference is recorded, never silently dropped.
                    UPDATE holds SET status = 'settled', settled_amount_micro_dzd = cost,
                                     finalized_at = settled_at,
                                     uncapped_cost_micro_dzd = CASE WHEN usage_cost > cost
                                                                    THEN LEAST(usage_cost, 9223372036854775807)::bigint END
                     WHERE id = item.id;
                    -- The transaction and ALL its legs in one INSERT (checked per statement).
                    WITH t AS (
                        INSERT INTO ledger_transactions (id, kind, account_id, reference, hold_id,
                                                         created_at)
                        VALUES (item.txn, 'hold_settlement', h.account_id,
                                h.model || ': ' || item.tokens_in || ' in + ' || item.tokens_out
                                    || ' out tokens' || CASE WHEN h.priority THEN ', priority' ELSE '' END
                                    || CASE WHEN usage_cost > cost AND NOT released
                                            THEN ', capped at the hold (usage cost '
                                                 || usage_cost || ' µDZD)'
                                            WHEN released
                                            THEN ', after its hold was released (usage cost '
                                                 || usage_cost || ' µDZD)'
                                            ELSE '' END,
                                item.id, settled_at)
                        RETURNING id
                    )
                    INSERT INTO ledger_entries (transaction_id, ledger_account, account_id,
                                                amount_micro_dzd, created_at)
                    SELECT t.id, l.ledger_account, l.account_id, l.amount, settled_at
                      FROM t CROSS JOIN (VALUES ('customer:' || h.account_id, h.account_id, -cost),
                                                ('system:revenue', NULL, cost))
                                        AS l(ledger_account, account_id, amount)
                     WHERE cost > 0;
                    UPDATE account_balances b
                       SET posted_debits_micro_dzd = b.posted_debits_micro_dzd + cost,
                           pending_micro_dzd = b.pending_micro_dzd - held,
                           updated_at = now()
                     WHERE b.account_id = h.account_id
                    RETURNING b.posted_credits_micro_dzd, b.posted_debits_micro_dzd, b.pending_micro_dzd
                         INTO credits, debits, pending;
                    IF NOT FOUND THEN
                        RAISE EXCEPTION 'hold %: account % has no balance row', item.id, h.account_id;
                    END IF;
                    IF h.scoped_token_id IS NOT NULL THEN
                        UPDATE scoped_tokens s
                           SET spent_micro_dzd = s.spent_micro_dzd + cost,
                               reserved_micro_dzd = s.reserved_micro_dzd - held
                         WHERE s.id = h.scoped_token_id;
                    END IF;
                    IF released THEN
                        -- Its record was written at the release (refused, 0): now the answer's.
                        UPDATE usage_records u
                           SET hold_status = 'settled', outcome = 'succeeded',
                               cost_micro_dzd = cost
                         WHERE u.hold_id = item.id;
                    END IF;
                    outcome := 'settled'; status := 'settled'; cost_micro_dzd := cost;
                    transaction_id := item.txn; finalized_at := settled_at;
                END IF;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            outcome := 'error'; error_state := SQLSTATE; error_message := SQLERRM;
        END;
        RETURN NEXT;
    END LOOP;
END;
$$;
