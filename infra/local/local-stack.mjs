// Runs the whole gateway on this machine: PostgreSQL and RabbitMQ from the machine's own
// binaries (state kept in .data/, or the servers named by DATABASE_URL / AMQP_URL), then the
// four services. Ctrl-C stops everything. Expects `pnpm install` and `pnpm build` done
// (infra/local/start.sh does both).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import {
  startPostgresCluster,
  startRabbitMqNode,
  waitForStatus,
} from '../../packages/testing/dist/index.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const dataDir = path.resolve(process.env.GATEWAY_DATA_DIR ?? path.join(root, '.data'));
const ports = { edge: 8080, billing: 8081, 'inference-worker': 8082, dispatcher: 8083 };
const stoppers = [];

function log(message) {
  console.log(`[local-stack] ${message}`);
}

async function ensureDatabase(adminUrl, name) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function startInfrastructure() {
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  let databases;
  if (process.env.DATABASE_URL) {
    databases = { billing: process.env.DATABASE_URL, dispatcher: process.env.DATABASE_URL };
  } else {
    const cluster = await startPostgresCluster({
      baseDir: path.join(dataDir, 'postgres'),
      port: 55432,
      durable: true,
    });
    stoppers.push(() => cluster.stop());
    log(`PostgreSQL on 127.0.0.1:${cluster.port} (data in ${dataDir}/postgres)`);
    databases = {
      billing: await ensureDatabase(cluster.adminUrl, 'gateway_billing'),
      dispatcher: await ensureDatabase(cluster.adminUrl, 'gateway_dispatcher'),
    };
  }
  let amqpUrl = process.env.AMQP_URL;
  if (!amqpUrl) {
    const node = await startRabbitMqNode({
      baseDir: path.join(dataDir, 'rabbitmq'),
      port: 55672,
      nodeName: 'gateway-local@localhost',
    });
    stoppers.push(() => node.destroy());
    amqpUrl = node.url;
    log(`RabbitMQ on 127.0.0.1:${node.port}`);
  }
  return { databases, amqpUrl };
}

/**
 * Secrets of the local stack: made once, kept in the data directory (mode 0600), so keys
 * and tokens issued by one run keep working in the next.
 */
function localSecrets() {
  const file = path.join(dataDir, 'secrets.json');
  if (!existsSync(file)) {
    const secrets = {
      INTERNAL_TOKEN: randomBytes(32).toString('hex'),
      MASTER_KEY: randomBytes(32).toString('base64'),
    };
    writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  }
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** Billing's schema is applied by its own migration command before the service starts. */
function migrateBilling(databaseUrl) {
  const migrate = spawnSync(
    process.execPath,
    [path.join(root, 'services/billing/dist/db/migrate-cli.js')],
    {
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: 'inherit',
    },
  );
  if (migrate.status !== 0) throw new Error('billing migrations failed');
}

function startService(name, env) {
  const child = spawn(process.execPath, [path.join(root, 'services', name, 'dist', 'main.js')], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(ports[name]), ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  stoppers.unshift(async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  });
  return child;
}

let stopping = false;
async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  log('stopping');
  for (const stop of stoppers) await stop().catch((error) => log(`stop failed: ${error.message}`));
  process.exit(code);
}
process.once('SIGINT', () => stopAll(0));
process.once('SIGTERM', () => stopAll(0));

try {
  const { databases, amqpUrl } = await startInfrastructure();
  const billingUrl = `http://127.0.0.1:${ports.billing}`;
  migrateBilling(databases.billing);
  const secrets = localSecrets();
  startService('billing', { DATABASE_URL: databases.billing, ...secrets });
  startService('inference-worker', {
    AMQP_URL: amqpUrl,
    BILLING_URL: billingUrl,
    BILLING_INTERNAL_TOKEN: secrets.INTERNAL_TOKEN,
  });
  // The dispatcher's own key, derived from the kept local secret: a restart can still open
  // the results and signing secrets that earlier runs sealed.
  const { createHash } = await import('node:crypto');
  startService('dispatcher', {
    AMQP_URL: amqpUrl,
    DATABASE_URL: databases.dispatcher,
    INTERNAL_TOKEN: secrets.INTERNAL_TOKEN,
    ENCRYPTION_KEY: createHash('sha256')
      .update(`dispatcher:${secrets.MASTER_KEY}`)
      .digest('base64'),
  });
  startService('edge', {
    AMQP_URL: amqpUrl,
    BILLING_URL: billingUrl,
    BILLING_INTERNAL_TOKEN: secrets.INTERNAL_TOKEN,
    // Local mode: the operator token defaults to the stack's service secret (.data/secrets.json).
    ADMIN_TOKEN: process.env.ADMIN_TOKEN ?? secrets.ADMIN_TOKEN ?? secrets.INTERNAL_TOKEN,
    DISPATCHER_URL: `http://127.0.0.1:${ports.dispatcher}`,
    DISPATCHER_INTERNAL_TOKEN: secrets.INTERNAL_TOKEN,
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
  });
  for (const [name, port] of Object.entries(ports)) {
    await waitForStatus(`http://127.0.0.1:${port}/readyz`, 200, 30_000);
    log(`${name} ready on http://127.0.0.1:${port}`);
  }
  log(`gateway ready: http://127.0.0.1:${ports.edge} (Ctrl-C stops everything)`);
} catch (error) {
  log(`failed to start: ${error.message}`);
  await stopAll(1);
}
