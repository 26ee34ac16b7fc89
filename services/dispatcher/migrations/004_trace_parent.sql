-- Issue 24 item 4: traces across the queue. The W3C `traceparent` of the completion event that
-- queued a delivery (version 00 is 55 characters; other versions may be longer), so each attempt,
-- however much later, is a span of the request's trace. Null while tracing is off. Not secret:
-- ids and a flag, no request data.
ALTER TABLE webhook_deliveries
    ADD COLUMN trace_parent text CHECK (trace_parent IS NULL OR length(trace_parent) <= 256);
