import { randomBytes } from 'node:crypto';
import {
  createIsolatedDatabase,
  dropIsolatedDatabase,
  ensureLoginRole,
  urlAsRole,
  type DatabaseTemplate,
} from './databases.js';

export const TEST_ENV = {
  postgresAdminUrl: 'GATEWAY_TEST_POSTGRES_ADMIN_URL',
  amqpUrl: 'GATEWAY_TEST_AMQP_URL',
  /** JSON: each service's AMQP URL as its own broker user (addTestBrokerUsers). */
  amqpServiceUrls: 'GATEWAY_TEST_AMQP_SERVICE_URLS',
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

/** The test broker as its administrator (guest): declares and reads anything. */
export const testAmqpUrl = (): string => required(TEST_ENV.amqpUrl);

/**
 * The test broker as `service`'s own user, with the permissions a deployment gives it (under
 * any prefix `uniquePrefix` makes): what a service connects with in the deployed shape.
 */
export function testServiceAmqpUrl(service: string): string {
  const urls = JSON.parse(required(TEST_ENV.amqpServiceUrls)) as Record<string, string>;
  const url = urls[service];
  if (!url) throw new Error(`no broker user for '${service}' on the test broker`);
  return url;
}
export const testPostgresAdminUrl = (): string => required(TEST_ENV.postgresAdminUrl);
export const testBaseDir = (): string => required(TEST_ENV.baseDir);

/**
 * Every prefix `uniquePrefix` makes (a regular expression): the test broker's service users get
 * their permissions under it, so one set of users serves every test file.
 */
export const TEST_PREFIX_PATTERN = '[a-z0-9-]+-[0-9a-f]{8}\\.';

/** A prefix for queue and exchange names, unique to one test file or test. */
export function uniquePrefix(label = 't'): string {
  if (!/^[a-z0-9-]+$/.test(label)) throw new Error(`prefix label '${label}': [a-z0-9-] only`);
  return `${label}-${randomBytes(4).toString('hex')}.`;
}

export interface TestDatabase {
  /** As the cluster's superuser (the owner's view: migrations, arranging what no service may). */
  url: string;
  /** As the template's `runtimeRole`: what the service itself connects with (else `url`). */
  runtimeUrl: string;
  drop(): Promise<void>;
}

/** A database of its own for one test file, cloned from the template when one is given. */
export async function createTestDatabase(template?: DatabaseTemplate): Promise<TestDatabase> {
  const adminUrl = testPostgresAdminUrl();
  const url = await createIsolatedDatabase(adminUrl, template);
  const role = template?.runtimeRole;
  return {
    url,
    runtimeUrl: role ? urlAsRole(url, role) : url,
    drop: () => dropIsolatedDatabase(adminUrl, url),
  };
}

/** A login role on the test cluster (e.g. a service's runtime role in a deployment's shape). */
export const createTestRole = (role: string): Promise<void> =>
  ensureLoginRole(testPostgresAdminUrl(), role);
