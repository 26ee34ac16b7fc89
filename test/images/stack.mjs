// Runs the compose topology from the built images (test/images/run.sh builds them) and checks
// it: migration one-shots, billing, the dispatcher, two inference workers, two edges and the
// stand-ins, on PostgreSQL and RabbitMQ started on the host by the project's own test helpers.
// Exits non-zero on any failure; removes its containers and processes in every case.
import pg from 'pg';
import { BROKER_SERVICES, brokerDefinitions } from '../../packages/messaging/dist/index.js';
import {
  addTestBrokerUsers,
  createTestCertificates,
  freeLoopbackPort,
  startTestInfrastructure,
} from '../../packages/testing/dist/index.js';
import { runChecks, startReceiver, waitReady } from './checks.mjs';
import {
  BASE_IMAGE,
  composeCommand,
  composeEnv,
  composeService,
  composeSetting,
  image,
  logsOf,
  removeAll,
  runContainer,
  started,
} from './topology.mjs';

const log = (message) => console.log(`[images] ${message}`);
const cleanups = [];

/** Databases and roles as compose's init script makes them (trust auth: no passwords here). */
async function databases(adminUrl) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    for (const db of ['billing', 'dispatcher']) {
      await client.query(`CREATE ROLE ${db} LOGIN`);
      await client.query(`CREATE DATABASE ${db} OWNER ${db}`);
      await client.query(`REVOKE ALL ON DATABASE ${db} FROM PUBLIC`);
      await client.query(`CREATE ROLE ${db}_runtime LOGIN`);
    }
    // The worker's and edge's roles on billing's database (granted by billing's migration).
    for (const role of ['WORKER_DATABASE_ROLE', 'EDGE_DATABASE_ROLE']) {
      await client.query(`CREATE ROLE ${composeSetting('migrate', role)} LOGIN`);
    }
  } finally {
    await client.end();
  }
}

async function main() {
  await removeAll();
  log('starting PostgreSQL and RabbitMQ on the host (@gateway/testing)');
  const infra = await startTestInfrastructure();
  cleanups.push(() => infra.stop());
  await databases(infra.postgres.adminUrl);
  const dbUrl = (role, db) => `postgres://${role}@127.0.0.1:${infra.postgres.port}/${db}`;
  // Compose's rabbitmq-users one-shot needs the management plugin; the same definitions
  // (brokerDefinitions) are imported with rabbitmqctl instead.
  const amqp = await addTestBrokerUsers(infra.rabbitmq, BROKER_SERVICES, (users) =>
    brokerDefinitions({ users }),
  );
  const certs = createTestCertificates();
  cleanups.push(() => certs.remove());
  const receiver = await startReceiver(certs);
  cleanups.push(() => receiver.close());

  const port = {};
  for (const name of [
    'billing',
    'dispatcher',
    'worker1',
    'worker2',
    'edge1',
    'edge2',
    'node',
    'provider',
  ]) {
    port[name] = await freeLoopbackPort();
  }
  const url = (name) => `http://127.0.0.1:${port[name]}`;

  log('migration one-shots');
  for (const [oneShot, img, db] of [
    ['migrate', 'billing', 'billing'],
    ['dispatcher-migrate', 'dispatcher', 'dispatcher'],
  ]) {
    const out = await runContainer(oneShot, image(img), {
      entrypoint: composeService(oneShot).entrypoint,
      env: composeEnv(oneShot, { DATABASE_URL: dbUrl(db, db) }),
      oneShot: true,
    });
    log(`${oneShot}: done (${out.trim().split('\n').length} log lines)`);
  }

  const standIn = (name, p) =>
    composeCommand(name).map((arg, i, all) => (all[i - 1] === '--port' ? String(p) : arg));
  await runContainer('stand-in-node', image('stand-ins'), {
    args: standIn('stand-in-node', port.node),
  });
  await runContainer('stand-in-provider', image('stand-ins'), {
    args: standIn('stand-in-provider', port.provider),
  });

  const service = async (name, compose, img, overrides, mounts = []) => {
    const env = composeEnv(compose, { HOST: '127.0.0.1', PORT: String(port[name]), ...overrides });
    await runContainer(name, image(img), { env, mounts });
    await waitReady(url(name), 90_000);
    log(`${name} ready on ${url(name)}`);
  };
  await service('billing', 'billing', 'billing', {
    DATABASE_URL: dbUrl('billing_runtime', 'billing'),
    AMQP_URL: amqp.billing,
  });
  await service(
    'dispatcher',
    'dispatcher',
    'dispatcher',
    {
      DATABASE_URL: dbUrl('dispatcher_runtime', 'dispatcher'),
      AMQP_URL: amqp.dispatcher,
      // The receiver is this test's HTTPS server on loopback, trusting only a throwaway CA.
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      WEBHOOK_CA_FILE: '/certs/ca.pem',
      DISPATCH_INTERVAL_MS: '200',
    },
    [`${certs.caFile}:/certs/ca.pem:ro`],
  );
  for (const name of ['worker1', 'worker2']) {
    await service(name, 'inference-worker', 'inference-worker', {
      AMQP_URL: amqp['inference-worker'],
      BILLING_URL: url('billing'),
      LEDGER_DATABASE_URL: dbUrl(composeSetting('migrate', 'WORKER_DATABASE_ROLE'), 'billing'),
      EXTERNAL_PROVIDER_URL: url('provider'),
    });
  }
  for (const name of ['edge1', 'edge2']) {
    await service(name, 'edge', 'edge', {
      AMQP_URL: amqp.edge,
      BILLING_URL: url('billing'),
      DISPATCHER_URL: url('dispatcher'),
      ADMISSION_DATABASE_URL: dbUrl(composeSetting('migrate', 'EDGE_DATABASE_ROLE'), 'billing'),
      // Synchronous jobs straight to both workers (ADR 0072), compose's shared credential kept.
      WORKER_URLS: `${url('worker1')},${url('worker2')}`,
      PUBLIC_BASE_URL: url(name),
      // The receiver is on loopback: edge accepts the URL with the development setting too.
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
    });
  }

  log('seed (infra/demo/seed-demo.mjs, in the base image as compose runs it in node:*-slim)');
  const seed = composeService('seed');
  // Compose mounts the seed's directory (the script and the demo data it imports).
  const [hostDir, mountPoint] = seed.volumes[0].split(':');
  const seedOut = await runContainer('seed', BASE_IMAGE, {
    args: seed.command,
    env: composeEnv('seed', { GATEWAY_URL: url('edge1'), DEMO_NODE_URL: url('node') }),
    mounts: [`${process.cwd()}/${hostDir.replace(/^\.\//, '')}:${mountPoint}:ro`],
    oneShot: true,
  });
  const apiKey = /^export GATEWAY_API_KEY=(\S+)$/m.exec(seedOut)?.[1];
  if (!apiKey) throw new Error(`the seed printed no key: ${seedOut}`);

  await runChecks({ url, apiKey, receiver, adminToken: composeSetting('edge', 'ADMIN_TOKEN') });
}

async function cleanup() {
  await removeAll().catch((error) =>
    console.error(`[images] removing containers: ${error.message}`),
  );
  for (const step of cleanups.reverse()) await Promise.resolve(step()).catch(() => undefined);
}

let failed = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => void cleanup().finally(() => process.exit(1)));
}
try {
  await main();
  log('PASS: the images run the compose topology');
} catch (error) {
  failed = true;
  console.error(`[images] FAIL: ${error.stack ?? error}`);
  for (const name of started) console.error(`--- podman logs ${name}\n${await logsOf(name)}`);
} finally {
  await cleanup();
}
process.exit(failed ? 1 : 0);
