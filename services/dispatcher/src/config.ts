import { Type, type Static } from '@sinclair/typebox';
import { fields, serviceFields } from '@gateway/config';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** A comma list of non-negative millisecond delays, e.g. `0,60000,120000`. */
const delayList = (defaultMs: readonly number[], description: string) =>
  Type.String({
    pattern: '^\\d{1,10}(,\\d{1,10}){0,49}$',
    default: defaultMs.join(','),
    description,
  });

/**
 * Delays before each attempt, the first attempt included (decisions §3). Variant A: at once,
 * then retries after 1, 2, 4, 8, 16, 30, 30, 30 minutes = 9 attempts. Variant B: three
 * attempts, each after its backoff of 30 s, 5 min and 30 min (the spec lists three backoffs
 * for three attempts, so the first one waits too).
 */
export const DEFAULT_SCHEDULE_A_MS = [0, 1, 2, 4, 8, 16, 30, 30, 30].map((m) => m * MINUTE_MS);
export const DEFAULT_SCHEDULE_B_MS = [30_000, 5 * MINUTE_MS, 30 * MINUTE_MS];

export const dispatcherConfigSchema = Type.Object({
  ...serviceFields(8083),
  DATABASE_URL: fields.postgresUrl(),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
  AMQP_URL: fields.amqpUrl(),
  AMQP_PREFIX: fields.amqpPrefix(),
  DEAD_LETTER_TTL_MS: fields.deadLetterTtlMs(),
  DEAD_LETTER_MAX_LENGTH: fields.deadLetterMaxLength(),
  INTERNAL_TOKEN: fields.secret(32),
  ENCRYPTION_KEY: fields.keyring(
    'AES-256-GCM keys of stored results and signing secrets: base64 of 32 bytes, or v2:<b64>,v1:<b64> newest first',
  ),
  DISPATCH_INTERVAL_MS: Type.Integer({ minimum: 5, maximum: 10 * MINUTE_MS, default: MINUTE_MS }),
  DISPATCH_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  DISPATCH_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 200, default: 20 }),
  /** Attempts in flight for one account before other accounts' due deliveries go first. */
  DISPATCH_ACCOUNT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 200, default: 5 }),
  ATTEMPT_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: MINUTE_MS, default: 5_000 }),
  MAX_RESPONSE_BODY_BYTES: Type.Integer({ minimum: 0, maximum: 65_536, default: 4_096 }),
  RETENTION_MS: fields.durationMs(6 * 60 * MINUTE_MS, 7 * DAY_MS),
  SECRET_ROTATION_WINDOW_MS: fields.durationMs(DAY_MS, 30 * DAY_MS),
  SECRET_ROTATIONS_PER_HOUR: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 5,
    description: 'Signing-secret rotations an account may make per hour (then 429)',
  }),
  RETRY_SCHEDULE_A_MS: delayList(DEFAULT_SCHEDULE_A_MS, 'Variant A: delay before each attempt'),
  RETRY_SCHEDULE_B_MS: delayList(DEFAULT_SCHEDULE_B_MS, 'Variant B: delay before each attempt'),
  RETRY_JITTER_RATIO: Type.Number({ minimum: 0, maximum: 1, default: 0.1 }),
  WEBHOOK_ALLOW_INSECURE_LOOPBACK: Type.Boolean({
    default: false,
    description: 'Development only: also allow http:// URLs and loopback destinations',
  }),
  WEBHOOK_CA_FILE: Type.Optional(
    Type.String({ minLength: 1, description: 'Extra CA certificates (PEM) to trust, e.g. tests' }),
  ),
});

/**
 * The migration command (`dist/db/migrate-cli.js`): DATABASE_URL is the schema owner's; the
 * runtime role (the user of the dispatcher's own DATABASE_URL) gets its privileges afterwards.
 */
export const dispatcherMigrateConfigSchema = Type.Object({
  DATABASE_URL: fields.postgresUrl(),
  RUNTIME_DATABASE_ROLE: fields.runtimeDatabaseRole('the dispatcher'),
  LOG_LEVEL: fields.logLevel(),
});

export type DispatcherConfig = Readonly<Static<typeof dispatcherConfigSchema>>;

/** `"0,60000"` → `[0, 60000]` (the schema's pattern already guarantees the shape). */
export const parseDelays = (text: string): number[] => text.split(',').map(Number);
