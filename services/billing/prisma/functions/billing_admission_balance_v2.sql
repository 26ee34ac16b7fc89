-- billing_admission_balance_v2: its live definition. To change it: README.md in this directory.
--
-- Admission, step 5 (billing_admit_batch_v1): what the account's balance leaves available (the
-- batch locked the row before its first step 3, and gives each item what the account's earlier
-- items left), then a hold already placed under this id (`h`: the row the batch read, or the
-- hold an earlier item of the batch placed; NULL if none): a retried admission is answered with
-- it (`replayed`), another account's is `hold_id_taken`. Nothing reserved yet.
CREATE OR REPLACE FUNCTION "billing_admission_balance_v2"(
    r billing_admission_request, adm billing_admission, available_micro_dzd BIGINT, h holds
) RETURNS billing_admission
LANGUAGE plpgsql SECURITY INVOKER
AS $$
BEGIN
    adm.available_micro_dzd := available_micro_dzd;
    IF h.id IS NOT NULL THEN
        adm.hold_id := h.id; adm.hold_amount_micro_dzd := h.amount_micro_dzd;
        adm.hold_expires_at := h.expires_at; adm.hold_status := h.status::text;
        adm.outcome := CASE WHEN h.account_id = adm.account_id THEN 'replayed' ELSE 'hold_id_taken' END;
    END IF;
    RETURN adm;
END;
$$;
