-- The purge of expired scoped tokens finds candidates by expiry and keeps tokens a hold names.
CREATE INDEX "scoped_tokens_expires_at_idx" ON "scoped_tokens"("expires_at");
CREATE INDEX "holds_scoped_token_id_idx" ON "holds"("scoped_token_id");
