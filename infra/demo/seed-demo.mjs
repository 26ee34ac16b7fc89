// Seeds a fresh `docker compose up` through edge's operator API, so the README's curl works:
// demo catalog models served by the stand-ins (chat, TGI completion and embedding models on the
// stand-in node, a reasoning model on the stand-in provider), an account named "demo" with
// 1000 DZD of credit, and its API key "demo". Prints `export GATEWAY_API_KEY=…` on stdout
// (everything else on stderr), so
//   eval "$(docker compose run --rm seed)"
// sets the key in a shell. Re-running is safe: models are PUT, the account is found by name, the
// key is regenerated (the previous one stops working) and the credit carries an Idempotency-Key
// (credited once per 24 h). Plain Node 20, no dependencies: it runs in the stock node image,
// with this directory mounted (the data and steps are demo-seed.mjs, shared with local mode).
//
// Environment: GATEWAY_URL (edge), GATEWAY_ADMIN_TOKEN, DEMO_NODE_URL (the stand-in node, as the
// worker reaches it), DEMO_PROVIDER_MODEL (the provider's model id), DEMO_CREDIT_DZD.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DEMO_ACCOUNT,
  creditDemo,
  demoCatalog,
  findOrCreateDemoAccount,
  issueDemoKey,
  operatorClient,
  seedCatalog,
} from './demo-seed.mjs';

const env = process.env;
const gatewayUrl = (env.GATEWAY_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
const adminToken = env.GATEWAY_ADMIN_TOKEN;
const nodeUrl = env.DEMO_NODE_URL ?? 'http://127.0.0.1:9100';
const providerModel = env.DEMO_PROVIDER_MODEL ?? 'reasoner-2026-01';
const creditDzd = Number(env.DEMO_CREDIT_DZD ?? '1000');
const READY_TIMEOUT_MS = Number(env.SEED_READY_TIMEOUT_MS ?? '120000');

const log = (message) => process.stderr.write(`[seed] ${message}\n`);

async function waitUntilReady() {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${gatewayUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = error.message;
    }
    await sleep(1000);
  }
  throw new Error(`edge at ${gatewayUrl} not ready within ${READY_TIMEOUT_MS} ms (${last})`);
}

async function seed() {
  if (!adminToken) throw new Error('GATEWAY_ADMIN_TOKEN is not set');
  await waitUntilReady();
  const call = operatorClient({
    baseUrl: `${gatewayUrl}/admin/v1`,
    headers: { Authorization: `Bearer ${adminToken}` },
  });
  await seedCatalog(call, demoCatalog({ nodeUrl, providerModel }), (id, model) =>
    log(`model ${id} → ${model.provider === 'node' ? nodeUrl : 'the external provider'}`),
  );
  const account = await findOrCreateDemoAccount(call);
  log(`account ${account.id} (${DEMO_ACCOUNT})`);
  const key = await issueDemoKey(call, account.id);
  const balanceDzd = await creditDemo(call, account.id, {
    amountDzd: creditDzd,
    reference: 'docker compose demo',
    keyPrefix: 'compose-demo-credit',
  });
  log(`balance ${balanceDzd} DZD`);
  process.stdout.write(`export GATEWAY_API_KEY=${key}\n`);
}

seed().catch((error) => {
  log(`failed: ${error.message}`);
  process.exitCode = 1;
});
