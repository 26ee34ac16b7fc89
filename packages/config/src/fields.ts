import { Type } from '@sinclair/typebox';

/** Reusable field schemas, so every service spells common settings the same way. */
export const fields = {
  port: (defaultPort: number) =>
    Type.Integer({
      minimum: 0,
      maximum: 65535,
      default: defaultPort,
      description: 'TCP port; 0 picks a free one',
    }),
  host: () =>
    Type.String({
      default: '127.0.0.1',
      minLength: 1,
      description: 'Listen address; loopback by default, 0.0.0.0 in containers',
    }),
  logLevel: () =>
    Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) =>
        Type.Literal(level),
      ),
      { default: 'info' },
    ),
  postgresUrl: () =>
    Type.String({ pattern: '^postgres(ql)?://', description: 'PostgreSQL connection URL' }),
  /** The restricted role a service connects as; its migration grants it what it needs. */
  runtimeDatabaseRole: (service: string) =>
    Type.String({
      pattern: '^[a-z_][a-z0-9_]{0,62}$',
      description: `Role ${service} runs as; granted exactly what it needs after migrating`,
    }),
  amqpUrl: () => Type.String({ pattern: '^amqps?://', description: 'RabbitMQ connection URL' }),
  /** Dead letters (which may hold prompts) are dropped after this long; see messaging's README. */
  deadLetterTtlMs: () =>
    Type.Integer({ minimum: 1_000, maximum: 14 * 86_400_000, default: 72 * 3_600_000 }),
  /** Dead letters kept per queue at most; beyond it the oldest are dropped. */
  deadLetterMaxLength: () => Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
  amqpPrefix: () =>
    Type.String({
      default: '',
      pattern: '^[a-zA-Z0-9._-]*$',
      description: 'Prefix of every exchange and queue name (isolates tests and environments)',
    }),
  httpUrl: () => Type.String({ pattern: '^https?://', description: 'HTTP base URL' }),
  durationMs: (defaultMs: number, maxMs = 86_400_000) =>
    Type.Integer({ minimum: 0, maximum: maxMs, default: defaultMs }),
  /**
   * Versioned AES-256-GCM keys: one base64 key (= version 1) or `v2:<base64>,v1:<base64>`,
   * newest first (format `keyring`, checked by @gateway/crypto's parser at load).
   */
  keyring: (description: string) =>
    Type.String({ format: 'keyring', maxLength: 1024, description }),
  /**
   * Addresses and CIDR ranges, comma-separated (format `address-list`, checked at load); empty
   * by default.
   */
  addressList: (description: string) =>
    Type.String({ format: 'address-list', default: '', maxLength: 4096, description }),
  secret: (minLength = 32) =>
    Type.String({ minLength, description: `Secret of at least ${minLength} characters` }),
};

/** Settings every service has: where it listens, how it logs, how long shutdown may take. */
export const serviceFields = (defaultPort: number) => ({
  PORT: fields.port(defaultPort),
  HOST: fields.host(),
  LOG_LEVEL: fields.logLevel(),
  // Kubernetes sends SIGKILL 30 s after SIGTERM by default; the product promises exit within 10 s.
  SHUTDOWN_TIMEOUT_MS: fields.durationMs(8_000, 9_500),
});
