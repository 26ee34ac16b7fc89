// The demo data of the local gateway, seeded through billing's operator API so it goes through
// the same validation as an operator's: idempotent, so every start can run it.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const DEMO_ACCOUNT = 'demo';
const DEMO_KEY = 'demo';
const DEMO_CREDIT_DZD = 1000;
const DEMO_OWNER_EMAIL = 'demo@example.com';

function adminCall(billingUrl, secrets) {
  return async (method, route, body, headers = {}) => {
    const response = await fetch(`${billingUrl}/internal/v1${route}`, {
      method,
      headers: {
        'X-Internal-Token': secrets.INTERNAL_TOKEN,
        'Content-Type': 'application/json',
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const json = response.status === 204 ? {} : await response.json();
    return { status: response.status, json };
  };
}

/** Realistic prices (DZD per million tokens) on the stand-ins. */
function demoCatalog(standIns, providerModel) {
  const node = (kind, protocol, input, output, maxOutputTokens) => ({
    kind,
    provider: 'node',
    protocol,
    upstream_model: 'stand-in-model',
    input_price_dzd_per_m: input,
    output_price_dzd_per_m: output,
    max_output_tokens: maxOutputTokens,
    nodes: [{ url: standIns.nodeUrl }],
  });
  return {
    // Reads images too (data URLs; the stand-in counts 85 or 765 tokens each, by detail).
    'demo/chat-small': {
      ...node('chat', 'openai', 20, 60, 1024),
      input_modalities: ['text', 'image'],
    },
    'demo/base-tgi': node('completion', 'tgi', 15, 45, 512),
    'demo/embed-small': node('embedding', 'openai', 2, 0, 1),
    'ext/reasoner-mini': {
      kind: 'chat',
      provider: 'external',
      upstream_model: providerModel,
      input_price_dzd_per_m: 150,
      output_price_dzd_per_m: 600,
      max_output_tokens: 8192,
    },
  };
}

async function findOrCreateAccount(call) {
  let cursor;
  do {
    const page = await call('GET', `/admin/accounts?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    const found = page.json.accounts.find((account) => account.name === DEMO_ACCOUNT);
    if (found) return found.id;
    cursor = page.json.next_cursor;
  } while (cursor);
  return (await call('POST', '/admin/accounts', { name: DEMO_ACCOUNT })).json.id;
}

/** The raw key is shown once by billing: kept in the data directory to print on every start. */
async function demoKey(call, accountId, dataDir) {
  const file = path.join(dataDir, 'demo-key.json');
  const saved = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
  if (saved?.accountId === accountId) {
    const check = await call('POST', '/authenticate', { authorization: `Bearer ${saved.key}` });
    if (check.status === 200) return saved.key;
  }
  const created = await call('POST', `/admin/accounts/${accountId}/api-keys`, { name: DEMO_KEY });
  const key =
    created.status === 201
      ? created.json.key
      : (await call('POST', `/admin/accounts/${accountId}/api-keys/${DEMO_KEY}/regenerate`)).json
          .key;
  writeFileSync(file, JSON.stringify({ accountId, key }, null, 2), { mode: 0o600 });
  return key;
}

/**
 * The demo account's dashboard owner: signs in with the kept password, or (first start, or the
 * password no longer works) is invited and accepts at once, which sets it.
 */
async function demoOwner(call, accountId, password) {
  const signIn = await call('POST', '/dashboard/sessions', { email: DEMO_OWNER_EMAIL, password });
  if (signIn.status !== 201) {
    const invitation = await call('POST', `/admin/accounts/${accountId}/invitations`, {
      email: DEMO_OWNER_EMAIL,
    });
    if (invitation.status !== 201) throw new Error(`inviting the demo owner: ${invitation.status}`);
    const accepted = await call('POST', '/dashboard/invitations/accept', {
      token: invitation.json.token,
      password,
    });
    if (accepted.status !== 201) throw new Error(`demo owner: ${JSON.stringify(accepted.json)}`);
    await call('POST', '/dashboard/sessions/end', { token: accepted.json.token });
    return DEMO_OWNER_EMAIL;
  }
  await call('POST', '/dashboard/sessions/end', { token: signIn.json.token });
  return DEMO_OWNER_EMAIL;
}

export async function seedDemo({ billingUrl, secrets, dataDir, standIns, providerModel }) {
  const call = adminCall(billingUrl, secrets);
  for (const [id, model] of Object.entries(demoCatalog(standIns, providerModel))) {
    const saved = await call('PUT', `/admin/models/${id}`, model);
    if (saved.status !== 200) throw new Error(`seeding model ${id}: ${JSON.stringify(saved.json)}`);
  }
  const accountId = await findOrCreateAccount(call);
  const apiKey = await demoKey(call, accountId, dataDir);
  const credit = await call(
    'POST',
    `/admin/accounts/${accountId}/credits`,
    { amount_dzd: DEMO_CREDIT_DZD, reference: 'local demo credit' },
    { 'Idempotency-Key': `local-demo-credit-${accountId}` },
  );
  if (credit.status !== 200) throw new Error(`seeding credit: ${JSON.stringify(credit.json)}`);
  const ownerEmail = await demoOwner(call, accountId, secrets.DEMO_OWNER_PASSWORD);
  return {
    accountId,
    apiKey,
    ownerEmail,
    ownerPassword: secrets.DEMO_OWNER_PASSWORD,
    balanceDzd: credit.json.balance_dzd,
    chatModel: 'demo/chat-small',
  };
}

/** Requests the demo account makes on its first start, so the dashboard's charts are not empty. */
const DEMO_PROMPTS = ['Hello!', 'What is a prepaid balance?', 'Name three colours.'];

/**
 * A few real requests with the demo key through edge (billed like any other) when the account
 * has no usage yet: the dashboard then opens on a chart and a request log, not empty states.
 */
export async function seedDemoUsage({ baseUrl, demo }) {
  const headers = { Authorization: `Bearer ${demo.apiKey}`, 'Content-Type': 'application/json' };
  const usage = await fetch(`${baseUrl}/v1/usage`, { headers });
  if (!usage.ok) throw new Error(`reading the demo usage: ${usage.status}`);
  if ((await usage.json()).data.length > 0) return;
  for (const content of DEMO_PROMPTS) {
    const answer = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: demo.chatModel, messages: [{ role: 'user', content }] }),
    });
    if (!answer.ok) throw new Error(`demo request: ${answer.status} ${await answer.text()}`);
  }
}

export function printWelcome({ baseUrl, demo, adminToken, dataDir, startedMs }) {
  const lines = [
    '',
    `Inference gateway ready in ${((Date.now() - startedMs) / 1000).toFixed(1)} s: ${baseUrl}`,
    `  demo account  ${demo.accountId}`,
    `  demo API key  ${demo.apiKey}`,
    `  dashboard     ${baseUrl}/dashboard/`,
    `  demo owner    ${demo.ownerEmail}`,
    `  password      ${demo.ownerPassword}`,
    `  admin token   ${adminToken}`,
    `  data          ${dataDir} (kept across restarts)`,
    '',
    'Try it:',
    `  curl -s ${baseUrl}/v1/chat/completions -H "Authorization: Bearer ${demo.apiKey}" \\`,
    `    -H 'Content-Type: application/json' \\`,
    `    -d '{"model":"${demo.chatModel}","messages":[{"role":"user","content":"Hello!"}]}'`,
    '',
    '  // node, with the official openai package',
    `  const client = new OpenAI({ baseURL: '${baseUrl}/v1', apiKey: '${demo.apiKey}' });`,
    `  const answer = await client.chat.completions.create({ model: '${demo.chatModel}', messages: [{ role: 'user', content: 'Hello!' }] });`,
    '',
    `Operator CLI: GATEWAY_URL=${baseUrl} GATEWAY_ADMIN_TOKEN=${adminToken} pnpm exec gatewayctl accounts list`,
    'Ctrl-C stops everything.',
    '',
  ];
  console.log(lines.join('\n'));
}
