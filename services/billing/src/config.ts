import { Type } from '@sinclair/typebox';
import { fields, serviceFields } from '@gateway/config';

export const billingConfigSchema = Type.Object({
  ...serviceFields(8081),
  DATABASE_URL: fields.postgresUrl(),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  INTERNAL_TOKEN: fields.secret(32),
  MASTER_KEY: Type.String({
    pattern: '^[A-Za-z0-9+/]{43}=$',
    description: 'AES-256-GCM key for API key secrets: 32 bytes, base64',
  }),
  TOKEN_PREFIX: Type.String({ default: 'service', pattern: '^[a-z][a-z0-9_-]{0,31}$' }),
  HOLD_TTL_MS: fields.durationMs(15 * 60_000),
  HOLD_SWEEP_INTERVAL_MS: fields.durationMs(30_000, 3_600_000),
  /** Expired scoped tokens no hold names are purged this long after their expiry. */
  SCOPED_TOKEN_PURGE_GRACE_MS: fields.durationMs(7 * 86_400_000, 365 * 86_400_000),
});
