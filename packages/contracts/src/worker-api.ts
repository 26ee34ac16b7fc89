/*
 * The inference worker's internal API (ADR 0072): edge hands a worker a synchronous job over
 * HTTP and reads its replies on the same connection, instead of two messages through RabbitMQ.
 * Only edge calls it, with its own credential (`x-internal-token`).
 *
 * `POST WORKER_JOBS_PATH`, body: one `inference.job` envelope (envelopes.ts), synchronous
 * (no `webhookUrl`), at most the broker's message limit.
 *
 * - 200: the worker took the job. The answer is `WORKER_REPLIES_CONTENT_TYPE`: one
 *   `inference.reply` envelope per line, in `seq` order, ending after the `final` or `error`
 *   reply. Headers are sent as soon as the job is taken, before the model is called: a 200 is
 *   the job's acceptance, as the broker's confirm is for a published job. An answer that ends
 *   without its last reply lost the job's answer (the worker died, or could not make the
 *   outcome durable): edge gives up on it as on a lost reply queue.
 * - 503 `service_unavailable`: the worker has no free slot for a direct job, or is stopping.
 *   Any answer other than 200 means the job was not taken: edge publishes it to the job queue.
 * - 400 / 401 / 413: a malformed job, a wrong credential, a body over the limit.
 *
 * `WORKER_ACCEPT_BY_HEADER` carries the latest time (ms since the epoch) the worker may take the
 * job: one it reads later (it was stopped, or overloaded) is refused, so that edge, which has
 * queued the job once that time plus a margin passed without an answer, never sees it run twice.
 * The same clocks bound a queued job's wait (`deadlineAtMs`).
 *
 * A connection closed before the last reply makes every later reply unroutable (as a reply queue
 * that is gone); edge cancels a job through the cancel broadcast (job-protocol.md §3).
 *
 * The worker ends a connection after a number of jobs (`DIRECT_JOBS_PER_CONNECTION`): that
 * job's answer carries `Connection: close`, and edge's next job goes over a new connection,
 * which a Service may route to another pod.
 */

export const WORKER_JOBS_PATH = '/internal/v1/jobs';
export const WORKER_ACCEPT_BY_HEADER = 'x-accept-by-ms';
/** Newline-delimited JSON: one reply envelope per line. */
export const WORKER_REPLIES_CONTENT_TYPE = 'application/x-ndjson';
