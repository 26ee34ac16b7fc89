import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createStandInModelNode, type StandInModelNode } from '@gateway/stand-ins';
import {
  createTestDatabase,
  fundAccount,
  spawnService,
  testServiceAmqpUrl,
  uniquePrefix,
  waitFor,
  waitForStatus,
  type ServiceProcess,
  type TestDatabase,
} from '@gateway/testing';
import {
  startReceiver,
  type ReceivedRequest,
  type Receiver,
} from '../../services/dispatcher/src/testing/receiver.suite.js';
import {
  createTestCertificates,
  type TestCertificates,
} from '../../services/dispatcher/src/testing/test-ca.suite.js';
import { dispatcherDatabaseTemplate } from '../../services/dispatcher/src/db/migrate.js';
import {
  startBilling,
  type BillingUnderTest,
} from '../../services/billing/src/testing/billing-under-test.suite.js';

/*
 * The asynchronous native path end to end, every hop real: a client POSTs to edge (a process) →
 * billing holds → RabbitMQ → the inference worker (a process) → a stand-in model node → billing
 * settles → completion event → the dispatcher (a process, its own database) → a signed HTTPS
 * POST to a receiver that trusts only the test CA. Billing runs in this process over its own
 * database so the test can read holds and the ledger directly.
 */

const entry = (service: string) => path.resolve('services', service, 'dist', 'main.js');
const token = () => randomBytes(32).toString('hex');

/** Prices in DZD per million tokens = µDZD per token. */
const PRICES = { input_price_dzd_per_m: 1_000, output_price_dzd_per_m: 3_000 } as const;
const nativeModel = (url: string) => ({
  kind: 'completion',
  provider: 'node',
  protocol: 'tgi',
  upstream_model: 'stand-in-model',
  max_output_tokens: 64,
  nodes: [{ url }],
  ...PRICES,
});

const CREDIT_DZD = 100;
const DELIVERY_WAIT_MS = 20_000;

let certs: TestCertificates;
let receiver: Receiver;
let billing: BillingUnderTest;
let node: StandInModelNode;
let brokenNode: StandInModelNode;
let dispatcherDb: TestDatabase;
const processes: ServiceProcess[] = [];
let edgeUrl: string;
let worker: ServiceProcess;
let dispatcher: ServiceProcess;
const adminToken = token();

async function spawnReady(service: string, env: NodeJS.ProcessEnv): Promise<ServiceProcess> {
  const child = await spawnService({ entry: entry(service), env });
  processes.push(child);
  await waitForStatus(`${child.baseUrl}/readyz`, 200);
  return child;
}

beforeAll(async () => {
  certs = createTestCertificates();
  receiver = await startReceiver(certs);
  billing = await startBilling();
  node = await createStandInModelNode({ answerTokensMin: 5, answerTokensMax: 8 });
  brokenNode = await createStandInModelNode();
  // Every generation request answers 500: the job fails after the worker gave up on the node.
  brokenNode.setFault({ kind: 'status', status: 500 });
  await billing.call('PUT', '/admin/models/acme/base-tgi', nativeModel(node.url));
  await billing.call('PUT', '/admin/models/acme/base-broken', nativeModel(brokenNode.url));

  // Each process as its own broker user, with a deployment's permissions.
  const prefix = uniquePrefix('e2e-webhook');
  const amqp = (service: string) => ({
    AMQP_URL: testServiceAmqpUrl(service),
    AMQP_PREFIX: prefix,
  });
  // Migrated by the owner (the template); the dispatcher runs as its runtime role, as deployed.
  dispatcherDb = await createTestDatabase(dispatcherDatabaseTemplate);
  const dispatcherToken = token();
  dispatcher = await spawnReady('dispatcher', {
    ...amqp('dispatcher'),
    DATABASE_URL: dispatcherDb.runtimeUrl,
    INTERNAL_TOKEN: dispatcherToken,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    DISPATCH_INTERVAL_MS: '50',
    // Variant B's first attempt waits 30 s by default; shrunk like the dispatch tick.
    RETRY_SCHEDULE_B_MS: '100,1000,2000',
    // The receiver is on loopback; its certificate is signed by the test CA only.
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
    WEBHOOK_CA_FILE: certs.caFile,
  });
  worker = await spawnReady('inference-worker', {
    ...amqp('inference-worker'),
    BILLING_URL: billing.url,
    BILLING_INTERNAL_TOKEN: billing.workerToken,
  });
  const edge = await spawnReady('edge', {
    ...amqp('edge'),
    BILLING_URL: billing.url,
    BILLING_INTERNAL_TOKEN: billing.internalToken,
    ADMIN_TOKEN: adminToken,
    DISPATCHER_URL: dispatcher.baseUrl,
    DISPATCHER_INTERNAL_TOKEN: dispatcherToken,
    // The receiver is on loopback: edge accepts the URL with the development setting too.
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
  });
  edgeUrl = edge.baseUrl;
}, 60_000);

afterAll(async () => {
  await Promise.all(processes.map((child) => child.stop('SIGTERM')));
  await node?.close();
  await brokenNode?.close();
  await receiver?.close();
  certs?.remove();
  await dispatcherDb?.drop();
  // Also checks the ledger's invariants over everything the tests did.
  await billing?.close();
});

async function edgeJson<T>(
  method: string,
  route: string,
  credential: string,
  body?: unknown,
): Promise<{ status: number; body: T; requestId: string | null }> {
  const response = await fetch(`${edgeUrl}${route}`, {
    method,
    headers: { Authorization: `Bearer ${credential}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as T,
    requestId: response.headers.get('x-request-id'),
  };
}

interface Ack {
  id: string;
  inference_status: { status: string };
  _service: { reserved_dzd: number; status: string };
}

/** Submits an async native job for a fresh funded account; returns the account and the ack. */
async function submitAsync(model: string, hookPath: string) {
  const account = await fundAccount(billing.operator, { creditDzd: CREDIT_DZD });
  const ack = await edgeJson<Ack>('POST', `/v1/inference/${model}`, account.apiKey, {
    input: 'Tell me about the Sahara.',
    parameters: { max_new_tokens: 16 },
    webhook: `https://127.0.0.1:${receiver.port}${hookPath}`,
  });
  expect(ack.status).toBe(200);
  expect(ack.body).toMatchObject({
    id: expect.stringMatching(/^inf-/),
    inference_status: { status: 'queued' },
    _service: { status: 'pending_settlement' },
  });
  expect(ack.body._service.reserved_dzd).toBeGreaterThan(0);
  return { account, ack: ack.body, requestId: ack.requestId! };
}

const deliveryTo = (hookPath: string): Promise<ReceivedRequest> =>
  waitFor(() => receiver.requestsTo(hookPath)[0], DELIVERY_WAIT_MS, `a delivery to ${hookPath}`);

/** The spec's reference verifier: any `v1` = hex HMAC-SHA256(secret, `<t>.` + raw body). */
function verifiesWith(secret: string, request: ReceivedRequest): boolean {
  const header = String(request.headers['x-service-signature']);
  const parts = header.split(',').map((part) => part.split('='));
  const t = parts.find(([key]) => key === 't')?.[1];
  if (t === undefined || !/^\d+$/.test(t)) return false;
  if (Math.abs(Date.now() / 1000 - Number(t)) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.`).update(request.body).digest();
  return parts
    .filter(([key]) => key === 'v1')
    .some(([, hex]) => {
      const given = Buffer.from(hex ?? '', 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

async function signingSecretOf(accountId: string): Promise<string> {
  const { status, body } = await edgeJson<{ secrets: { secret: string }[] }>(
    'GET',
    `/admin/v1/accounts/${accountId}/webhook-secrets`,
    adminToken,
  );
  expect(status).toBe(200);
  expect(body.secrets).toHaveLength(1);
  return body.secrets[0]!.secret;
}

interface StatementLine {
  kind: string;
  hold_id: string | null;
  amount_micro_dzd: string;
}

async function ledgerLinesOf(accountId: string): Promise<StatementLine[]> {
  const { status, body } = await edgeJson<Record<string, unknown>>(
    'GET',
    `/admin/v1/accounts/${accountId}/statement`,
    adminToken,
  );
  expect(status).toBe(200);
  return body.lines as StatementLine[];
}

describe('async native inference → webhook, end to end', () => {
  it('delivers a signed Variant A body whose cost_dzd is what the ledger settled', async () => {
    const { account, ack, requestId } = await submitAsync('acme/base-tgi', '/hook-ok');
    const delivery = await deliveryTo('/hook-ok');

    const deliveryId = String(delivery.headers['x-service-delivery-id']);
    expect(deliveryId).toMatch(/^whd_[0-9a-f-]{36}$/);
    expect(delivery.headers).toMatchObject({
      'user-agent': 'Service-Webhook/1.0',
      'content-type': 'application/json',
      'webhook-id': deliveryId,
    });
    expect(verifiesWith(await signingSecretOf(account.accountId), delivery)).toBe(true);
    expect(verifiesWith('whsec_not-the-secret', delivery)).toBe(false);

    const body = JSON.parse(delivery.body.toString('utf8')) as {
      usage: { prompt_tokens: number; completion_tokens: number };
      cost_dzd: number;
    };
    expect(body).toEqual({
      id: deliveryId,
      status: 'succeeded',
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) },
      cost_dzd: expect.any(Number),
      settlement: 'settled',
      results: [{ generated_text: expect.stringMatching(/\S/) }],
    });
    expect(body.usage.completion_tokens).toBeGreaterThan(0);

    // The ledger: one hold, settled at exactly the priced usage, which is what the body says.
    const holds = await billing.holdsOf(account.accountId);
    expect(holds).toHaveLength(1);
    const hold = holds[0]!;
    const pricedMicroDzd = BigInt(
      body.usage.prompt_tokens * PRICES.input_price_dzd_per_m +
        body.usage.completion_tokens * PRICES.output_price_dzd_per_m,
    );
    expect(hold).toMatchObject({ status: 'settled', settled: pricedMicroDzd });
    expect(BigInt(Math.round(body.cost_dzd * 1_000_000))).toBe(hold.settled);
    const settlements = (await ledgerLinesOf(account.accountId)).filter(
      (line) => line.kind === 'hold_settlement',
    );
    expect(settlements).toEqual([
      expect.objectContaining({ hold_id: hold.id, amount_micro_dzd: String(-hold.settled!) }),
    ]);
    const balance = await edgeJson<{ balance_dzd: number; reserved_dzd: number }>(
      'GET',
      '/v1/user/balance',
      account.apiKey,
    );
    expect(balance.body).toMatchObject({ reserved_dzd: 0 });
    expect(BigInt(Math.round(balance.body.balance_dzd * 1_000_000))).toBe(
      BigInt(CREDIT_DZD * 1_000_000) - hold.settled!,
    );

    // The operator sees the delivery, tied to the job the client was acknowledged with.
    const listed = await waitFor(
      async () => {
        const { body: page } = await edgeJson<{ deliveries: Record<string, unknown>[] }>(
          'GET',
          `/admin/v1/accounts/${account.accountId}/webhook-deliveries`,
          adminToken,
        );
        return page.deliveries[0]?.status === 'delivered' ? page.deliveries : undefined;
      },
      DELIVERY_WAIT_MS,
      'the delivery to be recorded',
    );
    expect(listed).toEqual([
      expect.objectContaining({
        id: deliveryId,
        job_id: ack.id,
        format: 'A',
        attempts: [expect.objectContaining({ attempt: 1, status_code: 204 })],
      }),
    ]);
    expect(receiver.requestsTo('/hook-ok')).toHaveLength(1);

    // One request id in every service's log lines for this request.
    // (Log lines arrive through the children's stdout pipes, so wait for them.)
    const loggedWith = (child: ServiceProcess, msg: string) =>
      waitFor(
        () => child.logs.find((line) => line.msg === msg && line.requestId === requestId),
        5_000,
        `"${msg}" logged with ${requestId}`,
      );
    await loggedWith(worker, 'job done');
    await loggedWith(dispatcher, 'delivery queued');
  });

  it('delivers the failure body for a failing model and voids the hold', async () => {
    const { account } = await submitAsync('acme/base-broken', '/hook-fail');
    const delivery = await deliveryTo('/hook-fail');
    const deliveryId = String(delivery.headers['x-service-delivery-id']);
    expect(verifiesWith(await signingSecretOf(account.accountId), delivery)).toBe(true);

    expect(JSON.parse(delivery.body.toString('utf8'))).toEqual({
      id: deliveryId,
      status: 'failed',
      usage: { prompt_tokens: 0, completion_tokens: 0 },
      cost_dzd: null,
      settlement: 'failed',
      error: { type: 'inference_failed', message: expect.any(String) },
    });
    // The model node was really asked (and failed), not skipped.
    expect(brokenNode.requests().length).toBeGreaterThan(0);

    const holds = await billing.holdsOf(account.accountId);
    expect(holds).toEqual([expect.objectContaining({ status: 'voided', settled: null })]);
    const lines = await ledgerLinesOf(account.accountId);
    expect(lines.map((line) => line.kind)).toEqual(['credit']);
    const balance = await edgeJson<{ balance_dzd: number; reserved_dzd: number }>(
      'GET',
      '/v1/user/balance',
      account.apiKey,
    );
    expect(balance.body).toMatchObject({ balance_dzd: CREDIT_DZD, reserved_dzd: 0 });
  });

  it("sends Variant B to an account whose webhook format is B, with the job's id and cost", async () => {
    const account = await fundAccount(billing.operator, { creditDzd: CREDIT_DZD });
    const patched = await edgeJson('PATCH', `/admin/v1/accounts/${account.accountId}`, adminToken, {
      webhook_format: 'B',
    });
    expect(patched.status).toBe(200);
    const ack = await edgeJson<Ack>('POST', '/v1/inference/acme/base-tgi', account.apiKey, {
      input: 'Tell me about the Hoggar.',
      parameters: { max_new_tokens: 16 },
      webhook: `https://127.0.0.1:${receiver.port}/hook-b`,
    });
    expect(ack.status).toBe(200);
    const delivery = await deliveryTo('/hook-b');

    const secret = await signingSecretOf(account.accountId);
    const expectedSignature = createHmac('sha256', secret).update(delivery.body).digest('hex');
    expect(delivery.headers['x-service-signature']).toBe(expectedSignature);
    const body = JSON.parse(delivery.body.toString('utf8')) as {
      inference_status: { cost: number };
    };
    expect(body).toEqual({
      request_id: ack.body.id,
      inference_status: {
        status: 'succeeded',
        runtime_ms: expect.any(Number),
        cost: expect.any(Number),
      },
      results: { generated_text: expect.stringMatching(/\S/) },
    });
    const [hold] = await billing.holdsOf(account.accountId);
    expect(hold).toMatchObject({ status: 'settled' });
    expect(BigInt(Math.round(body.inference_status.cost * 1_000_000))).toBe(hold!.settled);
  });
});
