// Seeds a fresh `docker compose up` through edge's operator API, so the README's curl works:
// demo catalog models served by the stand-ins (chat, TGI completion and embedding models on the
// stand-in node, a reasoning model on the stand-in provider), an account named "demo" with
// 1000 DZD of credit, and its API key "demo". Prints `export GATEWAY_API_KEY=…` on stdout
// (everything else on stderr), so
//   eval "$(docker compose run --rm seed)"
// sets the key in a shell. Re-running is safe: models are PUT, the account is found by name, the
// key is regenerated (the previous one stops working) and the credit carries an Idempotency-Key
// (credited once per 24 h). Plain Node 20, no dependencies: it runs in the stock node image.
//
// Environment: GATEWAY_URL (edge), GATEWAY_ADMIN_TOKEN, DEMO_NODE_URL (the stand-in node, as the
// worker reaches it), DEMO_PROVIDER_MODEL (the provider's model id), DEMO_CREDIT_DZD.
import { setTimeout as sleep } from 'node:timers/promises';

const env = process.env;
const gatewayUrl = (env.GATEWAY_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
const adminToken = env.GATEWAY_ADMIN_TOKEN;
const nodeUrl = env.DEMO_NODE_URL ?? 'http://127.0.0.1:9100';
const providerModel = env.DEMO_PROVIDER_MODEL ?? 'reasoner-2026-01';
const creditDzd = Number(env.DEMO_CREDIT_DZD ?? '1000');
const READY_TIMEOUT_MS = Number(env.SEED_READY_TIMEOUT_MS ?? '120000');
const ACCOUNT_NAME = 'demo';
const KEY_NAME = 'demo';

// The same demo catalog as local mode (infra/local/local-seed.mjs), so one README curl works
// against either: prices in DZD per million tokens, models served by the stand-ins.
const onNode = (kind, protocol, inputPrice, outputPrice, maxOutputTokens) => ({
  kind,
  provider: 'node',
  protocol,
  upstream_model: 'stand-in-model',
  input_price_dzd_per_m: inputPrice,
  output_price_dzd_per_m: outputPrice,
  max_output_tokens: maxOutputTokens,
  nodes: [{ url: nodeUrl }],
});
const DEMO_MODELS = {
  'demo/chat-small': onNode('chat', 'openai', 20, 60, 1024),
  'demo/base-tgi': onNode('completion', 'tgi', 15, 45, 512),
  'demo/embed-small': onNode('embedding', 'openai', 2, 0, 1),
  'ext/reasoner-mini': {
    kind: 'chat',
    provider: 'external',
    upstream_model: providerModel,
    input_price_dzd_per_m: 150,
    output_price_dzd_per_m: 600,
    max_output_tokens: 8192,
  },
};

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

/** One operator call; resolves with {status, body}, throws on an unexpected status. */
async function admin(method, path, body, { expect = [200, 201], headers = {} } = {}) {
  const response = await fetch(`${gatewayUrl}/admin/v1${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${adminToken}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15000),
  });
  const text = await response.text();
  if (!expect.includes(response.status)) {
    throw new Error(`${method} /admin/v1${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
  }
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

async function findAccount(name) {
  let cursor;
  do {
    const query = new URLSearchParams({ limit: '100', ...(cursor ? { cursor } : {}) });
    const { body } = await admin('GET', `/accounts?${query}`);
    const found = body.accounts.find((account) => account.name === name);
    if (found) return found;
    cursor = body.next_cursor ?? undefined;
  } while (cursor);
  return undefined;
}

async function seed() {
  if (!adminToken) throw new Error('GATEWAY_ADMIN_TOKEN is not set');
  await waitUntilReady();
  for (const [id, model] of Object.entries(DEMO_MODELS)) {
    await admin('PUT', `/models/${id}`, model);
    log(`model ${id} → ${model.provider === 'node' ? nodeUrl : 'the external provider'}`);
  }
  const account =
    (await findAccount(ACCOUNT_NAME)) ??
    (await admin('POST', '/accounts', { name: ACCOUNT_NAME })).body;
  log(`account ${account.id} (${ACCOUNT_NAME})`);
  const created = await admin(
    'POST',
    `/accounts/${account.id}/api-keys`,
    { name: KEY_NAME },
    { expect: [201, 409] },
  );
  const issued =
    created.status === 201
      ? created.body
      : (await admin('POST', `/accounts/${account.id}/api-keys/${KEY_NAME}/regenerate`)).body;
  const credit = await admin(
    'POST',
    `/accounts/${account.id}/credits`,
    { amount_dzd: creditDzd, reference: 'docker compose demo' },
    { headers: { 'Idempotency-Key': `compose-demo-credit-${account.id}` } },
  );
  log(`balance ${credit.body.balance_dzd} DZD`);
  process.stdout.write(`export GATEWAY_API_KEY=${issued.key}\n`);
}

seed().catch((error) => {
  log(`failed: ${error.message}`);
  process.exitCode = 1;
});
