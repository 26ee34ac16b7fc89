import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { listen, type RunningServer } from '@gateway/runtime';
import {
  balanceOf,
  putModel,
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { startEdge, type EdgeUnderTest } from '../testing/edge.suite.js';
import { chatCompletion, startFakeWorker, type FakeWorker } from '../testing/fake-worker.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/**
 * A client that leaves while its request is being admitted or its job
 * published. Its socket's 'close' fires before the job exists, so a listener attached after the
 * publish never ran: the job was not cancelled and the whole generation was charged.
 */

let billing: BillingUnderTest;
let edge: EdgeUnderTest;
let worker: FakeWorker;
let server: RunningServer;
let tenant: FundedAccount;

beforeAll(async () => {
  billing = await startBilling();
  edge = await startEdge(billing, { replyTimeoutMs: 3_000 });
  // Generates for 1.5 s, then settles, unless the job was cancelled by then (then voids).
  worker = await startFakeWorker(edge.bus, edge.names, billing, (job) => [
    { wait: 1_500 },
    { type: 'final', data: chatCompletion(job) },
  ]);
  server = await listen(edge.app, '127.0.0.1', 0);
  await putModel(billing, 'acme/chat');
  tenant = await fundAccount(billing.operator);
});

afterAll(async () => {
  await server?.close(1_000);
  await worker?.stop();
  await edge?.close();
  await billing?.close();
});

/** Sends a whole request, then drops the connection at once (before any answer). */
function sendAndLeave(stream: boolean): Promise<void> {
  const body = JSON.stringify({
    model: 'acme/chat',
    messages: [{ role: 'user', content: 'hello' }],
    stream,
  });
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => {
      socket.write(
        'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
          `Authorization: Bearer ${tenant.apiKey}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

it('a client gone during admission or publish is never charged and every job is cancelled', async () => {
  const before = await balanceOf(billing, tenant.accountId);
  const tries = 20;
  for (let i = 0; i < tries; i++) await sendAndLeave(i % 2 === 0);
  // Every request is either never published, or published and then cancelled.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  for (const job of worker.jobs) {
    expect(worker.cancels.map((cancel) => cancel.jobId)).toContain(job.jobId);
  }
  const after = await balanceOf(billing, tenant.accountId);
  expect(after.reserved_dzd).toBe(0);
  expect(after.balance_dzd).toBe(before.balance_dzd);
}, 30_000);
