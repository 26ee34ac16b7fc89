-- ledger_released_hold_cap: its live definition. To change it: README.md in this directory.
--
-- What the settlement of a hold released unpublished (ledger_settle_holds) may charge: `cost`
-- (its usage, at most the hold), at most what the account, its scoped token's spending limit
-- and the key's and token's budgets still have room for now, never below zero. The release gave
-- the hold's amount back and later admissions may have spent it: charging more could take the
-- balance below zero or a budget past its limit. A budget whose window started since the hold
-- was admitted does not count it (holds_budget_end), so it does not cap it either.
-- The caller holds the hold's row lock. Rows are locked in the order every path that ends a
-- hold takes them: balance, token, the key's budget, then the token's.
CREATE OR REPLACE FUNCTION "ledger_released_hold_cap"(p_hold_id TEXT, p_cost BIGINT)
RETURNS BIGINT
LANGUAGE plpgsql SECURITY INVOKER SET search_path = public, pg_temp
AS $$
DECLARE
    h RECORD;
    room BIGINT;
    cap BIGINT := GREATEST(p_cost, 0);
BEGIN
    SELECT hh.account_id, hh.scoped_token_id, hh.key_budget_id, hh.token_budget_id, hh.created_at
      INTO h FROM holds hh WHERE hh.id = p_hold_id;
    SELECT b.posted_credits_micro_dzd - b.posted_debits_micro_dzd - b.pending_micro_dzd
      INTO room FROM account_balances b WHERE b.account_id = h.account_id FOR UPDATE;
    cap := LEAST(cap, GREATEST(COALESCE(room, 0), 0));
    IF h.scoped_token_id IS NOT NULL THEN
        SELECT s.spending_limit_micro_dzd - s.spent_micro_dzd - s.reserved_micro_dzd
          INTO room FROM scoped_tokens s WHERE s.id = h.scoped_token_id FOR UPDATE;
        cap := LEAST(cap, GREATEST(COALESCE(room, cap), 0));
    END IF;
    room := NULL;
    SELECT bu.limit_micro_dzd - bu.spent_micro_dzd - bu.reserved_micro_dzd
      INTO room FROM budgets bu
     WHERE bu.id = h.key_budget_id AND h.created_at >= bu.window_start FOR UPDATE;
    cap := LEAST(cap, GREATEST(COALESCE(room, cap), 0));
    room := NULL;
    SELECT bu.limit_micro_dzd - bu.spent_micro_dzd - bu.reserved_micro_dzd
      INTO room FROM budgets bu
     WHERE bu.id = h.token_budget_id AND h.created_at >= bu.window_start FOR UPDATE;
    cap := LEAST(cap, GREATEST(COALESCE(room, cap), 0));
    RETURN cap;
END;
$$;
