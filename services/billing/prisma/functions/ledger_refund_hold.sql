-- ledger_refund_hold: its live definition. To change it: README.md in this directory.
--
-- Outcomes: refunded | replayed (already refunded: nothing moves) | not_settled (pending,
-- voided or expired: nothing was charged) | not_found.
CREATE OR REPLACE FUNCTION "ledger_refund_hold"(refund_hold_id TEXT, refund_transaction_id TEXT,
                                     refund_at TIMESTAMPTZ)
RETURNS TABLE (outcome TEXT, account_id TEXT, status TEXT, refunded_micro_dzd BIGINT)
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    h RECORD;
BEGIN
    SELECT hh.account_id, hh.scoped_token_id, hh.status::text AS status, hh.model,
           COALESCE(hh.settled_amount_micro_dzd, 0) AS cost, hh.refunded_at
      INTO h FROM holds hh WHERE hh.id = refund_hold_id FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'not_found';
        RETURN NEXT;
        RETURN;
    END IF;
    account_id := h.account_id; status := h.status; refunded_micro_dzd := h.cost;
    IF h.status <> 'settled' THEN
        outcome := 'not_settled';
    ELSIF h.refunded_at IS NOT NULL THEN
        outcome := 'replayed';
    ELSE
        UPDATE holds SET refunded_at = refund_at WHERE id = refund_hold_id;
        -- The request's usage record and receipt show the refund: same transaction.
        UPDATE usage_records u
           SET refunded_micro_dzd = h.cost, refunded_at = refund_at,
               refund_transaction_id = CASE WHEN h.cost > 0
                                          THEN ledger_refund_hold.refund_transaction_id END
         WHERE u.hold_id = refund_hold_id;
        IF h.cost > 0 THEN
            -- The transaction and both legs in one INSERT (the balance trigger checks it).
            WITH t AS (
                INSERT INTO ledger_transactions (id, kind, account_id, reference, hold_id, created_at)
                VALUES (refund_transaction_id, 'reversal', h.account_id,
                        'refund of hold ' || refund_hold_id || ' (' || h.model
                            || '): the answer was delivered to nobody',
                        NULL, refund_at)
                RETURNING id
            )
            INSERT INTO ledger_entries (transaction_id, ledger_account, account_id,
                                        amount_micro_dzd, created_at)
            SELECT t.id, l.ledger_account, l.account_id, l.amount, refund_at
              FROM t CROSS JOIN (VALUES ('customer:' || h.account_id, h.account_id, h.cost),
                                        ('system:revenue', NULL, -h.cost))
                                AS l(ledger_account, account_id, amount);
            UPDATE account_balances b
               SET posted_credits_micro_dzd = b.posted_credits_micro_dzd + h.cost,
                   updated_at = now()
             WHERE b.account_id = h.account_id;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'hold %: account % has no balance row', refund_hold_id, h.account_id;
            END IF;
            IF h.scoped_token_id IS NOT NULL THEN
                UPDATE scoped_tokens s SET spent_micro_dzd = s.spent_micro_dzd - h.cost
                 WHERE s.id = h.scoped_token_id;
            END IF;
        END IF;
        outcome := 'refunded';
    END IF;
    RETURN NEXT;
END;
$$;
