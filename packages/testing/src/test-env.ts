import { randomBytes } from 'node:crypto';
import {
  createIsolatedDatabase,
  dropIsolatedDatabase,
  type DatabaseTemplate,
} from './databases.js';

export const TEST_ENV = {
  postgresAdminUrl: 'GATEWAY_TEST_POSTGRES_ADMIN_URL',
  amqpUrl: 'GATEWAY_TEST_AMQP_URL',
  baseDir: 'GATEWAY_TEST_BASE_DIR',
} as const;

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: integration tests need the servers started by Jest's global setup ` +
        '(run the tests with `pnpm test`)',
    );
  }
  return value;
}

export const testAmqpUrl = (): string => required(TEST_ENV.amqpUrl);
export const testPostgresAdminUrl = (): string => required(TEST_ENV.postgresAdminUrl);
export const testBaseDir = (): string => required(TEST_ENV.baseDir);

/** A prefix for queue and exchange names, unique to one test file or test. */
export const uniquePrefix = (label = 't'): string => `${label}-${randomBytes(4).toString('hex')}.`;

/** A database of its own for one test file, cloned from the template when one is given. */
export async function createTestDatabase(template?: DatabaseTemplate): Promise<{
  url: string;
  drop(): Promise<void>;
}> {
  const adminUrl = testPostgresAdminUrl();
  const url = await createIsolatedDatabase(adminUrl, template);
  return { url, drop: () => dropIsolatedDatabase(adminUrl, url) };
}
