-- holds_budget_end: its live definition. To change it: README.md in this directory.
--
-- When a hold admitted under budgets ends, whichever path ends it (settle, void, cancel, the
-- sweeper's expiry, a refund, a settlement after a release): its amount leaves the budgets'
-- reservations, and a settled hold's cost counts as spent in the window it was admitted in (not
-- in a window that started since); a refund takes that cost back. Run by a deferred constraint
-- trigger, at commit: after the paths have locked the balance and token rows; the key's budget
-- row before the token's, as admission takes them (one statement each: an IN list would lock
-- them in scan order).
-- SECURITY DEFINER: a deferred trigger runs at commit, as the session's role, after the
-- function that ended the hold returned; the worker's and edge's function-only roles (ADR 0070)
-- have no right on budgets. A trigger function cannot be called directly.
CREATE OR REPLACE FUNCTION "holds_budget_end"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    budget_id TEXT;
BEGIN
    -- Each budget the hold names (an API key's hold names no token budget: no statement).
    FOREACH budget_id IN ARRAY ARRAY[NEW.key_budget_id, NEW.token_budget_id] LOOP
        CONTINUE WHEN budget_id IS NULL;
        IF OLD.status = 'pending' AND NEW.status <> 'pending' THEN
            UPDATE budgets b
               SET reserved_micro_dzd = b.reserved_micro_dzd - NEW.amount_micro_dzd,
                   spent_micro_dzd = b.spent_micro_dzd
                       + CASE WHEN NEW.status = 'settled' AND NEW.created_at >= b.window_start
                              THEN NEW.settled_amount_micro_dzd ELSE 0 END,
                   updated_at = now()
             WHERE b.id = budget_id;
        END IF;
        -- Settled after the sweeper released it unpublished (ledger_settle_holds): the release
        -- took its reservation back; its cost now counts as spent.
        IF OLD.status = 'expired' AND NEW.status = 'settled'
           AND NEW.settled_amount_micro_dzd > 0 THEN
            UPDATE budgets b
               SET spent_micro_dzd = b.spent_micro_dzd + NEW.settled_amount_micro_dzd,
                   updated_at = now()
             WHERE b.id = budget_id AND NEW.created_at >= b.window_start;
        END IF;
        IF OLD.refunded_at IS NULL AND NEW.refunded_at IS NOT NULL
           AND NEW.settled_amount_micro_dzd > 0 THEN
            UPDATE budgets b
               SET spent_micro_dzd = b.spent_micro_dzd - NEW.settled_amount_micro_dzd,
                   updated_at = now()
             WHERE b.id = budget_id AND NEW.created_at >= b.window_start;
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$;
