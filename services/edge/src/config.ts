import { Type, type Static } from '@sinclair/typebox';
import { fields, serviceFields } from '@gateway/config';
import { DEFAULT_BODY_BYTES_MAX, DEFAULT_REQUESTS_MAX } from './http/requests-in-progress.js';

const MIB = 1024 * 1024;

export const edgeConfigSchema = Type.Object({
  ...serviceFields(8080),
  // What this process serves, comma-separated: `api` (/v1), `admin` (/admin/v1), `dashboard`
  // (/dashboard). Kubernetes runs `api,admin` and `dashboard` in separate pods (app.ts says why).
  EDGE_SURFACES: Type.String({
    default: 'api,admin,dashboard',
    pattern: '^(api|admin|dashboard)(,(api|admin|dashboard)){0,2}$',
  }),
  // Needed with `api` (the job path); a dashboard-only process holds no broker credential.
  AMQP_URL: Type.String({ default: '', pattern: '^(amqps?://.+)?$' }),
  AMQP_PREFIX: fields.amqpPrefix(),
  DEAD_LETTER_TTL_MS: fields.deadLetterTtlMs(),
  DEAD_LETTER_MAX_LENGTH: fields.deadLetterMaxLength(),
  BILLING_URL: fields.httpUrl(),
  // billing's EDGE_INTERNAL_TOKEN: edge's credential on billing's internal API.
  BILLING_INTERNAL_TOKEN: fields.secret(32),
  BILLING_TIMEOUT_MS: fields.durationMs(5_000, 60_000),
  // Batch calls to billing of one kind running at once; calls made meanwhile form the next batch.
  BILLING_BATCH_MAX_IN_FLIGHT: Type.Integer({ minimum: 1, maximum: 16, default: 2 }),
  // Billing's database as edge's admission role, which may only admit API keys (ADR 0070): edge
  // then admits API-key requests there itself, not over billing's API (scoped tokens still go to
  // billing). Unset: every admission over the API.
  ADMISSION_DATABASE_URL: Type.Optional(fields.postgresUrl()),
  ADMISSION_DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 32, default: 4 }),
  // How long a hold admitted here lives unless its job is published: billing's HOLD_TTL_MS.
  HOLD_TTL_MS: fields.durationMs(15 * 60_000),
  // The operator API's bearer token (compared in constant time); needed with `admin`.
  ADMIN_TOKEN: Type.String({ default: '', pattern: '^(.{32,})?$' }),
  // The dispatcher's internal API, for the webhook secrets and deliveries of the operator API.
  DISPATCHER_URL: fields.httpUrl(),
  DISPATCHER_INTERNAL_TOKEN: fields.secret(32),
  // Workers that take synchronous jobs over HTTP (ADR 0072), comma-separated base URLs: the
  // worker Service's address, or each worker's. A job a worker does not take goes to the queue.
  // Empty: every job goes to the queue.
  WORKER_URLS: Type.String({
    default: '',
    maxLength: 4096,
    pattern: '^(https?://[^,\\s]+(,https?://[^,\\s]+)*)?$',
  }),
  // The workers' EDGE_INTERNAL_TOKEN: edge's credential at them; needed with WORKER_URLS.
  WORKER_INTERNAL_TOKEN: Type.String({ default: '', pattern: '^(.{32,})?$' }),
  // How long a worker has to take a direct job; one not taken by then (a stopped or overloaded
  // worker) is queued a second later, and the worker refuses it should it read it after all.
  WORKER_ACCEPT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 30_000, default: 1_000 }),
  // Direct jobs edge runs at once on each worker URL (its connections there); more are queued.
  WORKER_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 1024, default: 64 }),
  // A synchronous job with no (next) reply within this fails with 500 GATEWAY_TIMEOUT.
  REPLY_TIMEOUT_MS: fields.durationMs(120_000, 3_600_000),
  // `/v1/responses` with `background`: runs one edge process reads to their end at once (each
  // holds a job's replies in memory); one more is 503 before any hold.
  BACKGROUND_RESPONSES_MAX: Type.Integer({ minimum: 1, maximum: 100_000, default: 1_000 }),
  // Async (webhook) jobs not started by then are failed by the worker; below billing's hold TTL.
  ASYNC_JOB_DEADLINE_MS: fields.durationMs(600_000, 3_600_000),
  // The longest a started job may generate: the worker's JOB_MAX_GENERATION_MS or more. A job's
  // hold is kept until its deadline plus this (plus a settlement margin).
  JOB_MAX_GENERATION_MS: Type.Integer({ minimum: 60_000, maximum: 86_400_000, default: 1_800_000 }),
  // A synchronous job still running this long after it was queued gets its hold marked published
  // at billing; one that ended first needs no mark. Keep it well below billing's
  // HOLD_PUBLISH_GRACE_MS (30 s), which releases an unmarked hold. 0: mark every job at once.
  HOLD_PUBLISH_MARK_DELAY_MS: fields.durationMs(5_000, 20_000),
  JSON_BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 3 * MIB, default: MIB }),
  // A transcription upload travels base64-encoded in a job message; the bus caps those at 4 MiB.
  UPLOAD_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 3 * MIB, default: 2 * MIB }),
  // Public API requests one edge process serves at once, and their bodies' declared lengths
  // together (a chunked body, whose length is unknown until read, by the bytes read so far);
  // past either: 503 before the body is read (a chunked one: once it would overfill the
  // budget). A MiB of body held as its buffer, the parsed request and the job envelope is about
  // 3.5 MiB resident (measured), so the default budget keeps a burst of large prompts near
  // 110 MiB, within the pod's 512 MiB limit (k8s/base/edge.yaml).
  PUBLIC_REQUESTS_MAX: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: DEFAULT_REQUESTS_MAX,
  }),
  PUBLIC_BODY_BYTES_MAX: Type.Integer({
    minimum: 3 * MIB,
    maximum: 1024 * MIB,
    default: DEFAULT_BODY_BYTES_MAX,
  }),
  // Failed authentications a client address may make per minute before it gets 429.
  AUTH_FAILURES_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 100_000, default: 30 }),
  // The reverse proxies in front of edge (the ingress controller's pods): addresses and CIDR
  // ranges, comma-separated. Only a connection from one of them may name the client in
  // X-Forwarded-For (Express's `trust proxy`); empty: the client is the connection's peer.
  TRUSTED_PROXIES: fields.addressList(
    'Reverse proxies whose X-Forwarded-For names the client (addresses or CIDR ranges)',
  ),
  // Development only: accept http:// webhook URLs and loopback addresses (a receiver on this
  // machine), as the dispatcher's setting of the same name does.
  WEBHOOK_ALLOW_INSECURE_LOOPBACK: Type.Boolean({ default: false }),
  // The origin browsers reach the gateway on (https://gateway.example): invitation links and the
  // dashboard's Origin check. Empty: the Host the request was sent to.
  PUBLIC_BASE_URL: Type.String({ default: '', pattern: '^(https?://[^/?#\\s]+/?)?$' }),
  // Development only: no `Secure` on the dashboard cookie for http://127.0.0.1 / localhost.
  DASHBOARD_INSECURE_LOOPBACK_COOKIE: Type.Boolean({ default: false }),
  // The dashboard's own connections to billing (its bulkhead): no dashboard load, a sign-in
  // flood included, waits for or holds a connection of the public API's.
  DASHBOARD_BILLING_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 64, default: 8 }),
  // Sign-ins and invitation acceptances this replica has at billing at once; more get 503 at
  // once (billing hashes a few passwords at a time anyway).
  DASHBOARD_SIGN_INS_IN_FLIGHT: Type.Integer({ minimum: 1, maximum: 64, default: 4 }),
  // The built dashboard served at /dashboard/ (images: /app/dashboard). Empty: the workspace's
  // apps/dashboard/dist. A directory named here without index.html stops edge at start.
  DASHBOARD_DIR: Type.String({ default: '', maxLength: 4096 }),
});

export type EdgeConfig = Static<typeof edgeConfigSchema>;
