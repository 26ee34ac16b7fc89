import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { waitFor } from '@gateway/testing';
import {
  startSettlementConsumerFor,
  type BillingConsumer,
} from '../testing/settlement-consumer.suite.js';
import { chatModel, useWorkerFixture } from '../testing/worker-fixture.suite.js';

/*
 * A final reply nobody can receive (edge's reply queue is gone: edge died,
 * or its connection dropped) is not charged. Settled first (the reply carries the cost), the
 * charge is refunded; when billing was away, the queued end of the hold is a void.
 */

const fixture = useWorkerFixture({ billingAttempts: 2 });
const modelCalls = () =>
  fixture.node.requests().filter((request) => request.path.endsWith('/chat/completions')).length;

async function answerToNobody(model: string): Promise<string> {
  await fixture.putModel(model, chatModel([fixture.node.url]));
  const holdId = await fixture.hold(model, { inputTokens: 40 });
  fixture.node.clearRequests();
  await fixture.client.publish({
    accountId: fixture.account.accountId,
    holdId,
    model,
    modelKind: 'chat',
    endpoint: 'chat.completions',
    request: { model, messages: [{ role: 'user', content: 'Anyone there?' }] },
    // A reply queue that does not exist (any more): every reply is returned unroutable.
    replyTo: `${fixture.prefix}edge.replies.${randomUUID()}`,
  });
  return holdId;
}

describe('worker: a final reply nobody can receive is not charged', () => {
  let consumer: BillingConsumer | undefined;
  afterEach(async () => {
    fixture.billing.fault.fails = undefined;
    await consumer?.stop();
    consumer = undefined;
  });

  it('refunds the settlement of a non-streamed answer whose reply was unroutable', async () => {
    const before = await fixture.billing.postedBalance(fixture.account.accountId);
    const holdId = await answerToNobody('acme/nobody');
    await waitFor(() => fixture.billing.refunded(holdId), 15_000, 'the refund');
    expect((await fixture.billing.hold(holdId)).status).toBe('settled');
    expect(await fixture.billing.postedBalance(fixture.account.accountId)).toBe(before);
    expect(modelCalls()).toBe(1);
  });

  it('voids the hold when billing was away and the reply found nobody', async () => {
    const before = await fixture.billing.postedBalance(fixture.account.accountId);
    fixture.billing.fault.fails = (_method, path) =>
      /\/holds\/([^/]+\/settle|settlements)$/.test(path);
    const holdId = await answerToNobody('acme/nobody-queued');
    await waitFor(() => modelCalls() === 1 || undefined, 10_000, 'the model call');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    fixture.billing.fault.fails = undefined;
    consumer = await startSettlementConsumerFor(fixture);
    await waitFor(
      async () => ((await fixture.billing.hold(holdId)).status === 'voided' ? true : undefined),
      10_000,
      'the queued void',
    );
    expect(await fixture.billing.refunded(holdId)).toBe(false);
    expect(await fixture.billing.postedBalance(fixture.account.accountId)).toBe(before);
    expect(modelCalls()).toBe(1);
  });
});
