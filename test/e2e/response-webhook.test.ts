import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import type { ResponseWebhookBody } from '@gateway/contracts';
import {
  startReceiver,
  type Receiver,
} from '../../services/dispatcher/src/testing/receiver.suite.js';
import {
  createTestCertificates,
  type TestCertificates,
} from '../../services/dispatcher/src/testing/test-ca.suite.js';
import {
  CHAT_MODEL,
  errorOf,
  rawRequest,
  settledHolds,
  startAbuseStack,
  type AbuseStack,
} from '../abuse/abuse-stack.js';
import { loopbackWebhookEnv } from '../support/loopback-webhooks.js';
import { fundAccount, waitFor } from '@gateway/testing';

/*
 * A background response's `webhook` end to end, every service a process: edge accepts
 * `/v1/responses` with `background` and `webhook` and stores it queued; the job runs on the
 * worker; edge stores the result; billing's outbox publishes `response.ended`; the dispatcher
 * signs and POSTs it to a receiver that trusts only the test CA.
 */

const WEBHOOK_WAIT_MS = 20_000;

let certs: TestCertificates;
let receiver: Receiver;
let stack: AbuseStack;

beforeAll(async () => {
  certs = createTestCertificates();
  receiver = await startReceiver(certs);
  stack = await startAbuseStack(loopbackWebhookEnv(certs));
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.close();
  certs?.remove();
});

async function responses(apiKey: string, method: string, path: string, body?: unknown) {
  return rawRequest(stack.edgePort, {
    method,
    path: `/v1/responses${path}`,
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    timeoutMs: 30_000,
  });
}

describe("a background response's webhook, end to end", () => {
  it('announces its end once, signed as job webhooks are, naming it and nothing of its content', async () => {
    const name = `response-hook-${randomUUID()}`;
    const { accountId, apiKey } = await fundAccount(stack.operator, {
      name,
      keyName: 'main',
      creditDzd: 100,
      credit: { reference: name, idempotencyKey: name },
    });
    const hook = `https://127.0.0.1:${receiver.port}/responses/${accountId}`;
    const created = await responses(apiKey, 'POST', '', {
      model: CHAT_MODEL,
      input: 'A secret question.',
      background: true,
      webhook: hook,
    });
    expect(created.status).toBe(200);
    const queued = JSON.parse(created.body) as { id: string; status: string };
    expect(queued.status).toBe('queued');
    const [request] = await waitFor(
      () => {
        const received = receiver.requestsTo(`/responses/${accountId}`);
        return received.length > 0 ? received : undefined;
      },
      WEBHOOK_WAIT_MS,
      'the response webhook',
    );
    const body = request!.body.toString('utf8');
    expect(body).not.toContain('secret question');
    const secrets = await stack.admin('GET', `/accounts/${accountId}/webhook-secrets`);
    const [secret] = (JSON.parse(secrets.body) as { secrets: { secret: string }[] }).secrets;
    const verified = new Webhook(secret!.secret).verify(
      body,
      request!.headers as Record<string, string>,
    ) as ResponseWebhookBody;
    expect(verified).toEqual({
      type: 'response.completed',
      timestamp: expect.any(String),
      data: { id: queued.id },
    });
    expect(request!.headers['webhook-id']).toBe(queued.id);
    const stored = await responses(apiKey, 'GET', `/${queued.id}`);
    expect(JSON.parse(stored.body)).toMatchObject({ id: queued.id, status: 'completed' });
    // Once: nothing more arrives for it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requestsTo(`/responses/${accountId}`)).toHaveLength(1);
    await settledHolds(stack);
  });

  it('refuses a webhook without background (400 naming it), before any hold', async () => {
    const name = `response-hook-refused-${randomUUID()}`;
    const { apiKey } = await fundAccount(stack.operator, {
      name,
      keyName: 'main',
      creditDzd: 100,
      credit: { reference: name, idempotencyKey: name },
    });
    const refused = await responses(apiKey, 'POST', '', {
      model: CHAT_MODEL,
      input: 'x',
      webhook: `https://127.0.0.1:${receiver.port}/never`,
    });
    expect([refused.status, errorOf(refused).param]).toEqual([400, 'webhook']);
  });
});
