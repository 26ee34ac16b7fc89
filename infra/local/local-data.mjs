// Data of the local gateway: its secrets and its PostgreSQL databases, kept in the data
// directory so keys, balances and tokens survive restarts.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ensureLoginRole, startPostgresCluster } from '../../packages/testing/dist/index.js';
import { migrateDatabase as migrateBilling } from '../../services/billing/dist/db/migrate.js';
import { migrateDatabase as migrateDispatcher } from '../../services/dispatcher/dist/db/migrate.js';

const SECRET_MAKERS = {
  // Edge's credential on billing (INTERNAL_TOKEN, kept for existing data directories), the
  // worker's, edge's on the dispatcher and on the worker: one per caller and callee, as in a
  // deployment.
  INTERNAL_TOKEN: () => randomBytes(32).toString('hex'),
  WORKER_INTERNAL_TOKEN: () => randomBytes(32).toString('hex'),
  DISPATCHER_INTERNAL_TOKEN: () => randomBytes(32).toString('hex'),
  EDGE_AT_WORKER_TOKEN: () => randomBytes(32).toString('hex'),
  MASTER_KEY: () => randomBytes(32).toString('base64'),
  ADMIN_TOKEN: () => `adm_${randomBytes(24).toString('hex')}`,
  WEBHOOK_ENCRYPTION_KEY: () => randomBytes(32).toString('base64'),
  BILLING_DATABASE_PASSWORD: () => randomBytes(24).toString('hex'),
  DISPATCHER_DATABASE_PASSWORD: () => randomBytes(24).toString('hex'),
  WORKER_LEDGER_DATABASE_PASSWORD: () => randomBytes(24).toString('hex'),
  EDGE_ADMISSION_DATABASE_PASSWORD: () => randomBytes(24).toString('hex'),
  // The demo owner's dashboard password (printed at start, like the demo key).
  DEMO_OWNER_PASSWORD: () => randomBytes(12).toString('base64url'),
};

/**
 * The roles the services run as: they own nothing; each migration grants its role what the
 * service needs. Passwords are made once and kept in secrets.json.
 */
const RUNTIME_ROLES = {
  billing: {
    role: 'billing_runtime',
    password: 'BILLING_DATABASE_PASSWORD',
    migrate: migrateBilling,
  },
  dispatcher: {
    role: 'dispatcher_runtime',
    password: 'DISPATCHER_DATABASE_PASSWORD',
    migrate: migrateDispatcher,
  },
};

/** The worker's ledger role on billing's database: it may only end holds (ADR 0070). */
const WORKER_LEDGER_ROLE = { role: 'worker_ledger', password: 'WORKER_LEDGER_DATABASE_PASSWORD' };
/** Edge's admission role on billing's database: it may only admit API keys (ADR 0070). */
const EDGE_ADMISSION_ROLE = {
  role: 'edge_admission',
  password: 'EDGE_ADMISSION_DATABASE_PASSWORD',
};

/** Made once and kept (mode 0600); a secret added by a newer version is filled in. */
export function localSecrets(dataDir) {
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const file = path.join(dataDir, 'secrets.json');
  const secrets = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  let changed = false;
  for (const [name, make] of Object.entries(SECRET_MAKERS)) {
    if (!secrets[name]) {
      secrets[name] = make();
      changed = true;
    }
  }
  if (changed) writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

async function ensureDatabase(adminUrl, name) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * DATABASE_URL names a server to use (both services get a database of their own on it; its
 * user must be allowed to create databases and roles); otherwise a cluster of the machine's PostgreSQL binaries lives in the data directory.
 */
export async function localDatabases(dataDir, port, stoppers, log) {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const cluster = await startPostgresCluster({
      baseDir: path.join(dataDir, 'postgres'),
      port,
      durable: true,
    });
    stoppers.push(() => cluster.stop());
    log(`PostgreSQL on 127.0.0.1:${cluster.port} (data in ${path.join(dataDir, 'postgres')})`);
    adminUrl = cluster.adminUrl;
  }
  return {
    adminUrl,
    billing: await ensureDatabase(adminUrl, 'gateway_billing'),
    dispatcher: await ensureDatabase(adminUrl, 'gateway_dispatcher'),
  };
}

/** `databaseUrl` as `role`, with its password from the secrets. */
function urlAs(databaseUrl, { role, password }, secrets) {
  const url = new URL(databaseUrl);
  url.username = role;
  url.password = secrets[password];
  return url.toString();
}

/**
 * Migrates both databases as the admin (owner); each service's runtime role, and the worker's
 * and edge's roles on billing's, is created and granted what it needs. Returns each role's URL.
 */
export async function migrateDatabases(databases, secrets) {
  for (const { role, password } of [WORKER_LEDGER_ROLE, EDGE_ADMISSION_ROLE]) {
    await ensureLoginRole(databases.adminUrl, role, secrets[password]);
  }
  const workerRole = WORKER_LEDGER_ROLE.role;
  const edgeRole = EDGE_ADMISSION_ROLE.role;
  const runtimeUrls = {};
  for (const [service, { role, password, migrate }] of Object.entries(RUNTIME_ROLES)) {
    await ensureLoginRole(databases.adminUrl, role, secrets[password]);
    await migrate(databases[service], {
      runtimeRole: role,
      ...(service === 'billing' ? { workerRole, edgeRole } : {}),
    });
    runtimeUrls[service] = urlAs(databases[service], { role, password }, secrets);
  }
  return {
    billingRuntimeUrl: runtimeUrls.billing,
    dispatcherRuntimeUrl: runtimeUrls.dispatcher,
    workerLedgerUrl: urlAs(databases.billing, WORKER_LEDGER_ROLE, secrets),
    edgeAdmissionUrl: urlAs(databases.billing, EDGE_ADMISSION_ROLE, secrets),
  };
}
