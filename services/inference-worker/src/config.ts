import { Type, type Static } from '@sinclair/typebox';
import { fields, serviceFields } from '@gateway/config';

export const workerConfigSchema = Type.Object({
  ...serviceFields(8082),
  AMQP_URL: fields.amqpUrl(),
  AMQP_PREFIX: fields.amqpPrefix(),
  DEAD_LETTER_TTL_MS: fields.deadLetterTtlMs(),
  DEAD_LETTER_MAX_LENGTH: fields.deadLetterMaxLength(),
  BILLING_URL: fields.httpUrl(),
  BILLING_INTERNAL_TOKEN: fields.secret(32),
  BILLING_TIMEOUT_MS: fields.durationMs(5_000, 60_000),
  // Batch calls to billing of one kind running at once; calls made meanwhile form the next batch.
  BILLING_BATCH_MAX_IN_FLIGHT: Type.Integer({ minimum: 1, maximum: 16, default: 2 }),
  // Attempts per billing call on network errors and 5xx, with exponential backoff from 200 ms.
  BILLING_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 10, default: 4 }),
  // Billing's database as the worker's ledger role, which may only end holds (ADR 0070): the
  // worker then settles and voids there itself, not over billing's API. Unset: over the API.
  LEDGER_DATABASE_URL: Type.Optional(fields.postgresUrl()),
  LEDGER_DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 32, default: 4 }),
  // The external OpenAI-like provider; models with provider "external" fail without it.
  EXTERNAL_PROVIDER_URL: Type.Optional(fields.httpUrl()),
  EXTERNAL_PROVIDER_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  // Edge's credential for handing synchronous jobs over directly (ADR 0072). Unset: the worker
  // takes jobs from the queues only, and edge's direct calls are refused (it queues them).
  EDGE_INTERNAL_TOKEN: Type.Optional(fields.secret(32)),
  // Direct jobs running at once; past it a direct job is refused and edge queues it instead.
  DIRECT_JOBS_MAX: Type.Integer({ minimum: 1, maximum: 1024, default: 32 }),
  // Jobs one of edge's connections carries before the worker closes it, so that edge connects
  // anew and the Service may send it to another pod: a pod the autoscaler added gets its share
  // of direct jobs under load, when edge's connections never idle out (ADR 0072).
  DIRECT_JOBS_PER_CONNECTION: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 200 }),
  // Separate slots for priority jobs: a backlog of default jobs can never occupy them.
  JOB_PREFETCH: Type.Integer({ minimum: 1, maximum: 256, default: 8 }),
  PRIORITY_JOB_PREFETCH: Type.Integer({ minimum: 1, maximum: 256, default: 4 }),
  // Per attempt on one node: until the response headers (and, streaming, each next chunk).
  NODE_FIRST_BYTE_TIMEOUT_MS: fields.durationMs(30_000, 600_000),
  NODE_IDLE_TIMEOUT_MS: fields.durationMs(30_000, 600_000),
  // A non-streamed answer must be complete within this.
  NODE_REQUEST_TIMEOUT_MS: fields.durationMs(300_000, 3_600_000),
  // A non-streamed answer (JSON, speech bytes) larger than this fails the attempt unbuffered.
  NODE_RESPONSE_MAX_BYTES: Type.Integer({
    minimum: 65_536,
    maximum: 268_435_456,
    default: 16_777_216,
  }),
  // Overall cap of one started job (a job's deadline bounds only its wait in the queue); far
  // above any real generation, it only stops a node that never ends.
  JOB_MAX_GENERATION_MS: Type.Integer({ minimum: 60_000, maximum: 86_400_000, default: 1_800_000 }),
  NODE_MAX_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 10, default: 3 }),
  NODE_HEALTH_INTERVAL_MS: fields.durationMs(10_000, 600_000),
  CATALOG_CACHE_TTL_MS: fields.durationMs(5_000, 600_000),
  // How long a cancellation is remembered for a job not yet picked up.
  CANCEL_MEMORY_MS: fields.durationMs(15 * 60_000),
});

export type WorkerConfig = Static<typeof workerConfigSchema>;
