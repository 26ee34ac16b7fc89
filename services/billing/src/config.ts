import { Type } from '@sinclair/typebox';
import { fields, serviceFields } from '@gateway/config';

export const billingConfigSchema = Type.Object({
  ...serviceFields(8081),
  DATABASE_URL: fields.postgresUrl(),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  // Each caller's own credential (least privilege): edge's may authenticate, admit and use the
  // operator API; the worker's may only read the catalog and settle or void holds.
  EDGE_INTERNAL_TOKEN: fields.secret(32),
  WORKER_INTERNAL_TOKEN: fields.secret(32),
  MASTER_KEY: Type.String({
    pattern: '^[A-Za-z0-9+/]{43}=$',
    description: 'AES-256-GCM key for API key secrets: 32 bytes, base64',
  }),
  TOKEN_PREFIX: Type.String({ default: 'service', pattern: '^[a-z][a-z0-9_-]{0,31}$' }),
  HOLD_TTL_MS: fields.durationMs(15 * 60_000),
  HOLD_SWEEP_INTERVAL_MS: fields.durationMs(30_000, 3_600_000),
});

/**
 * The migration one-shot (`dist/db/migrate-cli.js`): DATABASE_URL is the schema owner's, and
 * the runtime role (the one in billing's own DATABASE_URL) gets its privileges afterwards.
 */
export const billingMigrateConfigSchema = Type.Object({
  DATABASE_URL: fields.postgresUrl(),
  RUNTIME_DATABASE_ROLE: Type.String({
    pattern: '^[a-z_][a-z0-9_]{0,62}$',
    description: 'Role billing runs as; granted exactly what it needs after migrating',
  }),
  LOG_LEVEL: fields.logLevel(),
});
