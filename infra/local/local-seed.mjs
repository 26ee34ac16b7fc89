// The demo data of the local gateway, seeded through billing's operator API so it goes through
// the same validation as an operator's: idempotent, so every start can run it. The catalog,
// account, key and credit steps are compose's too (infra/demo/demo-seed.mjs); the key kept in
// the data directory and the dashboard owner are local mode's own.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  DEMO_CHAT_MODEL,
  creditDemo,
  demoCatalog,
  findOrCreateDemoAccount,
  issueDemoKey,
  operatorClient,
  seedCatalog,
} from '../demo/demo-seed.mjs';

const DEMO_CREDIT_DZD = 1000;
const DEMO_OWNER_EMAIL = 'demo@example.com';

/** The raw key is shown once by billing: kept in the data directory to print on every start. */
async function demoKey({ admin, internal }, accountId, dataDir) {
  const file = path.join(dataDir, 'demo-key.json');
  const saved = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
  if (saved?.accountId === accountId) {
    const check = await internal(
      'POST',
      '/authenticate',
      { authorization: `Bearer ${saved.key}` },
      { expect: null },
    );
    if (check.status === 200) return saved.key;
  }
  const key = await issueDemoKey(admin, accountId);
  writeFileSync(file, JSON.stringify({ accountId, key }, null, 2), { mode: 0o600 });
  return key;
}

/**
 * The demo account's dashboard owner: signs in with the kept password, or (first start, or the
 * password no longer works) is invited and accepts at once, which sets it.
 */
async function demoOwner({ admin, internal }, accountId, password) {
  const signIn = await internal(
    'POST',
    '/dashboard/sessions',
    { email: DEMO_OWNER_EMAIL, password },
    { expect: null },
  );
  if (signIn.status !== 201) {
    const invitation = await admin(
      'POST',
      `/accounts/${accountId}/invitations`,
      { email: DEMO_OWNER_EMAIL },
      { expect: [201] },
    );
    const accepted = await internal(
      'POST',
      '/dashboard/invitations/accept',
      { token: invitation.body.token, password },
      { expect: [201] },
    );
    await internal(
      'POST',
      '/dashboard/sessions/end',
      { token: accepted.body.token },
      { expect: null },
    );
    return DEMO_OWNER_EMAIL;
  }
  await internal('POST', '/dashboard/sessions/end', { token: signIn.body.token }, { expect: null });
  return DEMO_OWNER_EMAIL;
}

export async function seedDemo({ billingUrl, secrets, dataDir, standIns, providerModel }) {
  const transport = { headers: { 'X-Internal-Token': secrets.INTERNAL_TOKEN }, timeoutMs: 10_000 };
  const calls = {
    admin: operatorClient({ baseUrl: `${billingUrl}/internal/v1/admin`, ...transport }),
    internal: operatorClient({ baseUrl: `${billingUrl}/internal/v1`, ...transport }),
  };
  await seedCatalog(calls.admin, demoCatalog({ nodeUrl: standIns.nodeUrl, providerModel }));
  const accountId = (await findOrCreateDemoAccount(calls.admin)).id;
  const apiKey = await demoKey(calls, accountId, dataDir);
  const balanceDzd = await creditDemo(calls.admin, accountId, {
    amountDzd: DEMO_CREDIT_DZD,
    reference: 'local demo credit',
    keyPrefix: 'local-demo-credit',
  });
  const ownerEmail = await demoOwner(calls, accountId, secrets.DEMO_OWNER_PASSWORD);
  return {
    accountId,
    apiKey,
    ownerEmail,
    ownerPassword: secrets.DEMO_OWNER_PASSWORD,
    balanceDzd,
    chatModel: DEMO_CHAT_MODEL,
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
