-- Edge marks a hold whose answer it handed to its request although the acknowledgement of the
-- reply was lost with its channel: the broker gave the reply back, and its copy may go unread to
-- billing.unread-replies, where it must not be refunded
-- (docs/adr/0068-an-answer-delivered-without-its-acknowledgement.md). Nullable, no default: adding
-- it rewrites nothing.
ALTER TABLE "holds" ADD COLUMN "answer_delivered_at" TIMESTAMPTZ(3);
