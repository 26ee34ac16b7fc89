import { Type } from '@sinclair/typebox';
import { fields, serviceFields } from '@gateway/config';
import { TIME_ZONE_PATTERN } from '@gateway/contracts';

const DAY_MS = 86_400_000;

export const billingConfigSchema = Type.Object({
  ...serviceFields(8081),
  DATABASE_URL: fields.postgresUrl(),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  // The settlement outbox: settlements workers queued while billing did not answer.
  AMQP_URL: fields.amqpUrl(),
  AMQP_PREFIX: fields.amqpPrefix(),
  DEAD_LETTER_TTL_MS: fields.deadLetterTtlMs(),
  DEAD_LETTER_MAX_LENGTH: fields.deadLetterMaxLength(),
  SETTLEMENT_PREFETCH: Type.Integer({ minimum: 1, maximum: 256, default: 32 }),
  // Each caller's own credential (least privilege): edge's may authenticate, admit and use the
  // operator API; the worker's may only read the catalog and settle or void holds.
  EDGE_INTERNAL_TOKEN: fields.secret(32),
  WORKER_INTERNAL_TOKEN: fields.secret(32),
  MASTER_KEY: fields.keyring(
    'AES-256-GCM keys of API-key secrets, stored idempotent answers and stored responses: base64 of 32 bytes, or v2:<b64>,v1:<b64> newest first',
  ),
  TOKEN_PREFIX: Type.String({ default: 'service', pattern: '^[a-z][a-z0-9_-]{0,31}$' }),
  HOLD_TTL_MS: fields.durationMs(15 * 60_000),
  HOLD_SWEEP_INTERVAL_MS: fields.durationMs(30_000, 3_600_000),
  // A hold edge has not marked published this long after admission is released (its job was
  // never queued: edge died or gave up). Must exceed edge's publish time, retries included.
  HOLD_PUBLISH_GRACE_MS: fields.durationMs(30_000, 600_000),
  // Idempotency-Key answers (which may carry a minted token) are kept this long, then purged.
  // The spec promises 24 h; a week is the most any operator should keep such answers.
  IDEMPOTENCY_TTL_MS: Type.Integer({ minimum: 60_000, maximum: 7 * DAY_MS, default: DAY_MS }),
  IDEMPOTENCY_PURGE_INTERVAL_MS: Type.Integer({
    minimum: 1_000,
    maximum: 3_600_000,
    default: 60_000,
  }),
  /** Expired scoped tokens no hold names are purged this long after their expiry. */
  SCOPED_TOKEN_PURGE_GRACE_MS: fields.durationMs(7 * 86_400_000, 365 * 86_400_000),
  // Dashboard sessions end after this long unused, and at the latest this long after sign-in.
  DASHBOARD_SESSION_IDLE_MS: Type.Integer({
    minimum: 120_000,
    maximum: DAY_MS,
    default: 1_800_000,
  }),
  DASHBOARD_SESSION_MAX_MS: Type.Integer({
    minimum: 300_000,
    maximum: 30 * DAY_MS,
    default: 43_200_000,
  }),
  // An owner invitation link works this long (once).
  DASHBOARD_INVITATION_TTL_MS: Type.Integer({
    minimum: 300_000,
    maximum: 30 * DAY_MS,
    default: 3 * DAY_MS,
  }),
  // Dashboard sign-ins per email and hour before 429, the right password included
  // (counted in the database, so one limit across every edge and billing replica).
  DASHBOARD_SIGN_IN_FAILURES_PER_HOUR: Type.Integer({ minimum: 1, maximum: 10_000, default: 10 }),
  // Dashboard password hashes (sign-in, invitation) run at once per process, and how many more
  // may wait for a turn; beyond that 503 at once. One hash: 32 MiB and ~0.1 s of a core.
  DASHBOARD_PASSWORD_HASHES_AT_ONCE: Type.Integer({ minimum: 1, maximum: 16, default: 1 }),
  DASHBOARD_PASSWORD_HASH_QUEUE: Type.Integer({ minimum: 0, maximum: 1_000, default: 4 }),
  // Account alerts: how often accounts are evaluated and the outbox published,
  // and how many accounts (and events) one tick takes at most.
  ALERT_EVALUATE_INTERVAL_MS: Type.Integer({ minimum: 50, maximum: 3_600_000, default: 15_000 }),
  ALERT_EVALUATE_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 10_000, default: 500 }),
  /** Usage records are deleted this many days after their request ended (sums are kept). */
  USAGE_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 400 }),
  /**
   * Stored Responses API state (`store: true`) is deleted this many days after it was stored:
   * the reference API keeps it 30 days.
   */
  RESPONSE_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  /**
   * The business's time zone for finance's period report: where a day of the books begins and
   * ends unless a report asks for another (an IANA name; PostgreSQL converts the bounds).
   */
  REPORT_TIME_ZONE: Type.String({ pattern: TIME_ZONE_PATTERN, default: 'Africa/Algiers' }),
});

/**
 * The migration one-shot (`dist/db/migrate-cli.js`): DATABASE_URL is the schema owner's, and
 * the runtime role (the one in billing's own DATABASE_URL) gets its privileges afterwards.
 */
export const billingMigrateConfigSchema = Type.Object({
  DATABASE_URL: fields.postgresUrl(),
  RUNTIME_DATABASE_ROLE: fields.runtimeDatabaseRole('billing'),
  // Finance's BI tools' role (LOGIN, created by whoever provisions the database): granted
  // SELECT on the finance views only. Empty: none.
  FINANCE_DATABASE_ROLE: Type.String({ default: '', pattern: '^([a-z_][a-z0-9_]{0,62})?$' }),
  // The inference worker's ledger role (LOGIN, created like the runtime role): may execute the
  // two functions that end a hold and nothing else (ADR 0070). Empty: none, and the worker ends
  // holds through billing's HTTP API.
  WORKER_DATABASE_ROLE: Type.String({ default: '', pattern: '^([a-z_][a-z0-9_]{0,62})?$' }),
  // Edge's admission role (LOGIN, created like the runtime role): may execute the API keys'
  // admission and a key's last use, nothing else (ADR 0070). Empty: none, and edge admits
  // through billing's HTTP API.
  EDGE_DATABASE_ROLE: Type.String({ default: '', pattern: '^([a-z_][a-z0-9_]{0,62})?$' }),
  LOG_LEVEL: fields.logLevel(),
});

/**
 * Refuses hold timings that contradict each other: an unpublished hold must be released long
 * before its TTL, and the sweeper must run at least once per publish grace to honour it.
 */
export function assertHoldTimings(config: {
  HOLD_TTL_MS: number;
  HOLD_SWEEP_INTERVAL_MS: number;
  HOLD_PUBLISH_GRACE_MS: number;
}): void {
  if (config.HOLD_PUBLISH_GRACE_MS >= config.HOLD_TTL_MS) {
    throw new Error('HOLD_PUBLISH_GRACE_MS must be shorter than HOLD_TTL_MS');
  }
  if (config.HOLD_SWEEP_INTERVAL_MS > config.HOLD_PUBLISH_GRACE_MS) {
    throw new Error('HOLD_SWEEP_INTERVAL_MS must not exceed HOLD_PUBLISH_GRACE_MS');
  }
}
