-- The ENCRYPTION_KEY version each value was sealed with (the keyring opens with that version).
-- Rows sealed before keys had versions used the one key there was: version 1. The default stays
-- so that a replica of the previous release, which knows no versions and seals with its single
-- key (version 1), still writes correct rows during a rolling update.
ALTER TABLE webhook_secrets ADD COLUMN secret_key_version integer NOT NULL DEFAULT 1
    CHECK (secret_key_version > 0);
ALTER TABLE webhook_deliveries ADD COLUMN payload_key_version integer NOT NULL DEFAULT 1
    CHECK (payload_key_version > 0);
