-- Background responses (`/v1/responses` with `background: true`, issue 32 item 4): edge saves
-- the response when it is queued, `in_progress`, and replaces its content once with the result
-- (completed, incomplete, failed or cancelled: `in_progress` false). The runtime role may now
-- update a stored response, and the finish statement only touches one still in progress. While
-- in progress, a response cannot be continued (`previous_response_id`).

ALTER TABLE "stored_responses" ADD COLUMN "in_progress" BOOLEAN NOT NULL DEFAULT false;
