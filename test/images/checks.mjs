// What test/images/stack.mjs checks on the running containers: each one's /readyz (printed),
// a chat completion, a streamed one, an async job's webhook, /metrics, a rate limit exact
// across two edges, and SIGTERM: every service exits by itself within compose's grace period.
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { composeService, stopContainer } from './topology.mjs';

const log = (message) => console.log(`[images] ${message}`);
const SERVICES = ['billing', 'dispatcher', 'worker1', 'worker2', 'edge1', 'edge2'];

function check(ok, what) {
  if (!ok) throw new Error(`check failed: ${what}`);
  log(`ok: ${what}`);
}

export async function waitReady(baseUrl, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
      last = `HTTP ${response.status} ${await response.text()}`;
    } catch (error) {
      last = error.message;
    }
    await sleep(500);
  }
  throw new Error(`${baseUrl}/readyz not 200 within ${timeoutMs} ms (${last})`);
}

/** An HTTPS webhook receiver on loopback (certificate from the throwaway test CA). */
export async function startReceiver(certs) {
  const received = [];
  const server = https.createServer(
    { key: certs.serverKeyPem, cert: certs.serverCertPem },
    (req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        received.push({
          path: req.url,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        });
        res.writeHead(200).end('{}');
      });
    },
  );
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    received,
    close: () => new Promise((r) => server.close(r)),
  };
}

const call = (baseUrl, path, apiKey, body) =>
  fetch(`${baseUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });

const chatBody = (extra = {}) => ({
  model: 'demo/chat-small',
  messages: [{ role: 'user', content: 'Say hello.' }],
  ...extra,
});

async function completions({ url, apiKey }) {
  const plain = await call(url('edge1'), '/v1/chat/completions', apiKey, chatBody());
  const json = await plain.json();
  check(
    plain.status === 200 && json.object === 'chat.completion',
    `chat completion through edge1 (${plain.status})`,
  );
  const streamed = await call(
    url('edge2'),
    '/v1/chat/completions',
    apiKey,
    chatBody({ stream: true }),
  );
  const text = await streamed.text();
  const chunks = text.split('\n').filter((line) => line.startsWith('data: {'));
  check(
    streamed.status === 200 && chunks.length > 1 && text.includes('data: [DONE]'),
    `streamed completion through edge2 (${chunks.length} chunks, [DONE])`,
  );
}

async function asyncWebhook({ url, apiKey, receiver }) {
  const hook = `/hook-${Date.now()}`;
  const ack = await call(url('edge2'), '/v1/inference/demo/base-tgi', apiKey, {
    input: 'Tell me about the Sahara.',
    parameters: { max_new_tokens: 16 },
    webhook: `https://127.0.0.1:${receiver.port}${hook}`,
  });
  const body = await ack.json();
  check(
    ack.status === 200 && body.inference_status?.status === 'queued',
    `async job accepted (${ack.status})`,
  );
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && !receiver.received.some((r) => r.path === hook)) await sleep(200);
  const delivery = receiver.received.find((r) => r.path === hook);
  check(
    Boolean(delivery?.headers['x-service-signature']),
    'signed webhook delivered to the receiver',
  );
}

async function metrics({ url }) {
  for (const name of SERVICES) {
    const response = await fetch(`${url(name)}/metrics`);
    const text = await response.text();
    check(
      response.status === 200 && text.includes('# TYPE'),
      `${name} /metrics (${text.split('\n').length} lines)`,
    );
  }
}

/** A limit of N a minute on a fresh account, 2N requests alternating edges: exactly N pass. */
async function rateLimit({ url, adminToken }) {
  const limit = 5;
  const admin = async (method, path, body, headers = {}) => {
    const response = await fetch(`${url('edge1')}/admin/v1${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${adminToken}`,
        'Content-Type': 'application/json',
        ...headers,
      },
      body: JSON.stringify(body),
    });
    if (!response.ok)
      throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const account = await admin('POST', '/accounts', { name: `limits-${Date.now()}` });
  const { key } = await admin('POST', `/accounts/${account.id}/api-keys`, { name: 'limits' });
  await admin(
    'POST',
    `/accounts/${account.id}/credits`,
    { amount_dzd: 100, reference: 'images test' },
    { 'Idempotency-Key': `images-${account.id}` },
  );
  await admin('PATCH', `/accounts/${account.id}`, { rate_limit_per_minute: limit });
  // Windows are fixed minutes: start early in one so that the burst stays inside it.
  const intoMinuteMs = Date.now() % 60_000;
  if (intoMinuteMs > 40_000) await sleep(60_500 - intoMinuteMs);
  const statuses = [];
  for (let i = 0; i < 2 * limit; i += 1) {
    const response = await call(
      url(i % 2 ? 'edge2' : 'edge1'),
      '/v1/chat/completions',
      key,
      chatBody({ max_tokens: 4 }),
    );
    await response.arrayBuffer();
    statuses.push(response.status);
  }
  const passed = statuses.filter((s) => s === 200).length;
  const limited = statuses.filter((s) => s === 429).length;
  check(
    passed === limit && limited === limit,
    `rate limit ${limit}/min exact across two edges (${statuses.join(' ')})`,
  );
}

/** `podman stop` sends SIGTERM, then SIGKILL after compose's stop_grace_period. */
async function sigterm() {
  const graceS = Number.parseInt(composeService('edge').stop_grace_period, 10);
  for (const name of [...SERVICES].reverse()) {
    const { code, elapsedMs } = await stopContainer(name, graceS);
    check(
      code === 0 && elapsedMs < graceS * 1000,
      `${name} exits on SIGTERM with 0 in ${elapsedMs} ms (grace ${graceS} s)`,
    );
  }
}

export async function runChecks(context) {
  for (const name of SERVICES) {
    const response = await fetch(`${context.url(name)}/readyz`);
    log(`/readyz ${name}: ${response.status} ${(await response.text()).trim()}`);
    check(response.status === 200, `${name} ready`);
  }
  await completions(context);
  await asyncWebhook(context);
  await metrics(context);
  await rateLimit(context);
  await sigterm();
}
