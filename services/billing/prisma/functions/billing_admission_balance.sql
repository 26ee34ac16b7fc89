-- billing_admission_balance: its live definition. To change it: README.md in this directory.
--
-- Admission, step 5 (billing_admit_v5): the account's balance row, locked first of the money
-- rows (it serialises the account's admissions; the lock order of every path that ends a hold),
-- and what it leaves available; then a hold already placed under this id: a retried admission
-- is answered with it (`replayed`), another account's is `hold_id_taken`. Nothing reserved yet.
CREATE OR REPLACE FUNCTION "billing_admission_balance"(
    r billing_admission_request, adm billing_admission
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
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
