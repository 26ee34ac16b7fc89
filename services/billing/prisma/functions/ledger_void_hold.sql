-- ledger_void_hold: its live definition. To change it: README.md in this directory.
--
-- Voids one hold in one statement. Outcomes: voided | replayed (already voided or expired:
-- nothing moves) | conflict (settled) | not_found.
-- A void of a hold the sweeper released unpublished says its owner gave up on the job (edge
-- answered the client an error, or the worker failed it): a settlement arriving later is then
-- refused, as for any voided hold (ledger_settle_holds charges only a release nobody confirmed).
CREATE OR REPLACE FUNCTION "ledger_void_hold"(void_hold_id TEXT, voided_at TIMESTAMPTZ)
RETURNS TABLE (
    outcome TEXT, account_id TEXT, status TEXT, amount_micro_dzd BIGINT,
    settled_amount_micro_dzd BIGINT, expires_at TIMESTAMPTZ, finalized_at TIMESTAMPTZ,
    credits BIGINT, debits BIGINT, pending BIGINT
)
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    h RECORD;
BEGIN
    SELECT hh.account_id, hh.scoped_token_id, hh.amount_micro_dzd, hh.status::text AS status,
           hh.settled_amount_micro_dzd, hh.expires_at, hh.finalized_at
      INTO h FROM holds hh WHERE hh.id = void_hold_id FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'not_found';
        RETURN NEXT;
        RETURN;
    END IF;
    account_id := h.account_id; status := h.status; amount_micro_dzd := h.amount_micro_dzd;
    settled_amount_micro_dzd := h.settled_amount_micro_dzd; expires_at := h.expires_at;
    finalized_at := h.finalized_at;
    IF h.status = 'pending' THEN
        UPDATE holds SET status = 'voided', finalized_at = voided_at WHERE id = void_hold_id;
        UPDATE account_balances b
           SET pending_micro_dzd = b.pending_micro_dzd - h.amount_micro_dzd, updated_at = now()
         WHERE b.account_id = h.account_id
        RETURNING b.posted_credits_micro_dzd, b.posted_debits_micro_dzd, b.pending_micro_dzd
             INTO credits, debits, pending;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'hold %: account % has no balance row', void_hold_id, h.account_id;
        END IF;
        IF h.scoped_token_id IS NOT NULL THEN
            UPDATE scoped_tokens s SET reserved_micro_dzd = s.reserved_micro_dzd - h.amount_micro_dzd
             WHERE s.id = h.scoped_token_id;
        END IF;
        outcome := 'voided'; status := 'voided'; finalized_at := voided_at;
    ELSIF h.status = 'settled' THEN
        outcome := 'conflict';
    ELSE
        outcome := 'replayed';
        UPDATE holds SET released_unpublished = false
         WHERE id = void_hold_id AND released_unpublished;
        SELECT b.posted_credits_micro_dzd, b.posted_debits_micro_dzd, b.pending_micro_dzd
          INTO credits, debits, pending FROM account_balances b WHERE b.account_id = h.account_id;
    END IF;
    RETURN NEXT;
END;
$$;
