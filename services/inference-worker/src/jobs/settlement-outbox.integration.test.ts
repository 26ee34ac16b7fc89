import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { makeEnvelope, type BillingSettlementPayload } from '@gateway/contracts';
import { gatewayNames, type MessageBus } from '@gateway/messaging';
import { admitHold } from '../../../billing/src/testing/billing-under-test.suite.js';
import { waitFor } from '@gateway/testing';
import { startSettlementConsumerFor } from '../testing/settlement-consumer.suite.js';
import {
  chatModel,
  contentOf,
  expectedCost,
  useWorkerFixture,
} from '../testing/worker-fixture.suite.js';

/*
 * Billing unreachable when the worker settles. The answer exists, so its
 * settlement is queued (billing.settlements) and the job ends: the model runs once, and billing
 * applies the settlement, exactly once, when it is back.
 */

const fixture = useWorkerFixture({ billingAttempts: 2 });
// Settlements and voids, one by one or in batches.
const settlePath = (path: string) =>
  /^\/internal\/v1\/holds\/([^/]+\/(settle|void)|settlements|voids)$/.test(path);
const startBillingConsumer = () => startSettlementConsumerFor(fixture);
const settlementsOf = (holdId: string) => fixture.billing.ledgerTransactionsOf(holdId);

/** A settlement of 12 + 7 tokens, as a worker queues it when billing does not answer. */
const settlementOf = (holdId: string, jobId = holdId): BillingSettlementPayload => ({
  holdId,
  jobId,
  action: 'settle',
  inputTokens: 12,
  outputTokens: 7,
  producedAtMs: Date.now(),
});
/** What edge's reply queue dead-letters when its edge is gone (services/edge/src/jobs/job-replies.ts). */
const unreadReply = (holdId: string, type: 'chunk' | 'final', seq: number) =>
  makeEnvelope('inference.reply', { jobId: holdId, seq, type, data: {} });
const refunded = (holdId: string, what = 'the refund') =>
  waitFor(async () => ((await fixture.billing.refunded(holdId)) ? true : undefined), 10_000, what);

/** A hold of `model` whose settlement went through billing's queue (the worker's outbox). */
async function settledHold(bus: MessageBus, model: string): Promise<string> {
  const holdId = await fixture.hold(model, { inputTokens: 40 });
  const queue = { queue: gatewayNames(fixture.prefix).queues.billingSettlements };
  await bus.publish(queue, makeEnvelope('billing.settlement', settlementOf(holdId)));
  await waitFor(
    async () => ((await fixture.billing.hold(holdId)).status === 'settled' ? true : undefined),
    10_000,
    'the settlement applied',
  );
  return holdId;
}

const modelCalls = () =>
  fixture.node.requests().filter((request) => request.path.endsWith('/chat/completions')).length;

describe('worker: settlement outbox (billing unreachable when settling)', () => {
  let consumer: { bus: MessageBus; stop(): Promise<void> } | undefined;
  afterEach(async () => {
    fixture.billing.fault.fails = undefined;
    await consumer?.stop();
    consumer = undefined;
  });
  afterAll(async () => {
    await consumer?.stop();
  });

  it('answers once, runs the model once, and settles once billing is back', async () => {
    await fixture.putModel('acme/outbox', chatModel([fixture.node.url]));
    const { holdId, pricing } = await admitHold(fixture.billing, fixture.account, 'acme/outbox', {
      inputTokens: 40,
    });
    fixture.node.clearRequests();
    // Billing's settle and void answer 503 (its database or process away): every retry fails.
    fixture.billing.fault.fails = (_method, path) => settlePath(path);
    const jobId = await fixture.client.publish({
      accountId: fixture.account.accountId,
      holdId,
      model: 'acme/outbox',
      modelKind: 'chat',
      endpoint: 'chat.completions',
      request: { model: 'acme/outbox', messages: [{ role: 'user', content: 'Hello dunes.' }] },
      ...(pricing ? { pricing } : {}),
    });
    const { end } = await fixture.client.waitForEnd(jobId, 20_000);
    expect(end.type).toBe('final');
    expect(contentOf(end.data).length).toBeGreaterThan(0);
    // The cost is known from the hold's prices (what billing will settle); the
    // balance is not, and the answer says the settlement is pending.
    expect(pricing).toBeDefined();
    expect(end.costMicroDzd).toBe(String(expectedCost(end.usage!)));
    expect(end.settlementPending).toBe(true);
    expect(end.balanceMicroDzd).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(modelCalls()).toBe(1);
    expect(fixture.client.repliesOf(jobId).filter((r) => r.type !== 'chunk')).toHaveLength(1);
    expect((await fixture.billing.hold(holdId)).status).toBe('pending');

    // Billing is back: its consumer applies the queued settlement.
    fixture.billing.fault.fails = undefined;
    consumer = await startBillingConsumer();
    const hold = await waitFor(
      async () => {
        const view = await fixture.billing.hold(holdId);
        return view.status === 'settled' ? view : undefined;
      },
      10_000,
      'the queued settlement applied',
    );
    expect(hold.settled).toBe(expectedCost(end.usage!));
    expect(await settlementsOf(holdId)).toBe(1);
    expect(modelCalls()).toBe(1);
  });

  it('sends an async job its webhook event once billing priced the queued settlement', async () => {
    await fixture.putModel('acme/outbox-async', chatModel([fixture.node.url]));
    const holdId = await fixture.hold('acme/outbox-async', { inputTokens: 40 });
    fixture.node.clearRequests();
    fixture.billing.fault.fails = (_method, path) => settlePath(path);
    const jobId = await fixture.client.publish(
      {
        accountId: fixture.account.accountId,
        holdId,
        model: 'acme/outbox-async',
        modelKind: 'chat',
        endpoint: 'chat.completions',
        request: { model: 'acme/outbox-async', messages: [{ role: 'user', content: 'Hi.' }] },
        webhookUrl: 'https://hooks.example.com/done',
      },
      { async: true },
    );
    await waitFor(() => modelCalls() === 1 || undefined, 10_000, 'the model call');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // No event without a cost: it waits in the settlement for billing.
    expect(fixture.client.completions.filter((c) => c.jobId === jobId)).toHaveLength(0);
    fixture.billing.fault.fails = undefined;
    consumer = await startBillingConsumer();
    const completion = await fixture.client.waitForCompletion(jobId, 10_000);
    expect(completion.status).toBe('succeeded');
    const hold = await fixture.billing.hold(holdId);
    expect(hold.status).toBe('settled');
    expect(completion.costMicroDzd).toBe(String(hold.settled));
    expect(hold.settled).toBe(expectedCost(completion.usage));
    expect(modelCalls()).toBe(1);
  });

  it('settles once when the same settlement is queued twice', async () => {
    await fixture.putModel('acme/outbox-dup', chatModel([fixture.node.url]));
    const holdId = await fixture.hold('acme/outbox-dup', { inputTokens: 40 });
    consumer = await startBillingConsumer();
    const queue = { queue: gatewayNames(fixture.prefix).queues.billingSettlements };
    const envelope = makeEnvelope('billing.settlement', settlementOf(holdId, `job-${holdId}`));
    await consumer.bus.publish(queue, envelope);
    await consumer.bus.publish(queue, envelope);
    await waitFor(
      async () => ((await fixture.billing.hold(holdId)).status === 'settled' ? true : undefined),
      10_000,
      'the settlement applied',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const hold = await fixture.billing.hold(holdId);
    expect(hold.settled).toBe(expectedCost({ promptTokens: 12, completionTokens: 7 }));
    expect(await settlementsOf(holdId)).toBe(1);
  });

  it("refunds an answer whose first reply edge's queue dead-lettered unread, a stream's first chunk too; a stream read in part keeps its charge", async () => {
    await fixture.putModel('acme/outbox-unread', chatModel([fixture.node.url]));
    consumer = await startBillingConsumer();
    const queue = { queue: gatewayNames(fixture.prefix).queues.billingSettlements };
    const unreadQueue = { queue: gatewayNames(fixture.prefix).queues.unreadReplies };
    const settled = () => settledHold(consumer!.bus, 'acme/outbox-unread');
    const answered = await settled();
    const streamedUnread = await settled();
    const streamedRead = await settled();
    // Replies are read from their own queue only: one in the settlement queue is unreadable
    // there (dead-lettered), never a refund.
    await consumer.bus.publish(queue, unreadReply(answered, 'final', 0));
    // A stream whose first chunks were relayed: only its later replies went unread.
    await consumer.bus.publish(unreadQueue, unreadReply(streamedRead, 'chunk', 3));
    await consumer.bus.publish(unreadQueue, unreadReply(streamedRead, 'final', 4));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await fixture.billing.refunded(answered)).toBe(false);
    // A non-streamed answer's final reply is the answer, and a stream's first chunk its start:
    // unread, nothing of either reached anyone.
    await consumer.bus.publish(unreadQueue, unreadReply(answered, 'final', 0));
    await consumer.bus.publish(unreadQueue, unreadReply(streamedUnread, 'chunk', 0));
    await consumer.bus.publish(unreadQueue, unreadReply(streamedUnread, 'final', 9));
    await refunded(answered);
    await refunded(streamedUnread);
    expect(await fixture.billing.refunded(streamedRead)).toBe(false);
  });

  it('does not refund the unread copy of an answer edge marked delivered (its ack was lost)', async () => {
    await fixture.putModel('acme/outbox-delivered', chatModel([fixture.node.url]));
    consumer = await startBillingConsumer();
    const names = gatewayNames(fixture.prefix);
    const settle = () => settledHold(consumer!.bus, 'acme/outbox-delivered');
    const delivered = await settle();
    const unread = await settle();
    expect(await fixture.billing.call('POST', `/holds/${delivered}/delivered`)).toEqual({
      holdId: delivered,
      refunded: false,
    });
    await consumer.bus.publish(
      { queue: names.queues.unreadReplies },
      unreadReply(delivered, 'final', 0),
    );
    await consumer.bus.publish(
      { queue: names.queues.unreadReplies },
      unreadReply(unread, 'final', 0),
    );
    await refunded(unread);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await fixture.billing.refunded(delivered)).toBe(false);
    // A mark after the refund says so: the answer went out free of charge.
    expect(await fixture.billing.call('POST', `/holds/${unread}/delivered`)).toEqual({
      holdId: unread,
      refunded: true,
    });
  });

  it('refunds an unread stream whose hold was still pending once its settlement comes', async () => {
    await fixture.putModel('acme/outbox-unread-pending', chatModel([fixture.node.url]));
    consumer = await startBillingConsumer();
    const holdId = await fixture.hold('acme/outbox-unread-pending', { inputTokens: 40 });
    const names = gatewayNames(fixture.prefix);
    // The stream's first chunk dead-letters while the worker is still running (or its
    // settlement is queued): there is nothing to refund yet.
    await consumer.bus.publish(
      { queue: names.queues.unreadReplies },
      unreadReply(holdId, 'chunk', 0),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await fixture.billing.hold(holdId)).status).toBe('pending');
    await consumer.bus.publish(
      { queue: names.queues.billingSettlements },
      makeEnvelope('billing.settlement', settlementOf(holdId)),
    );
    await refunded(holdId, 'the refund after the settlement');
    expect((await fixture.billing.hold(holdId)).status).toBe('settled');
  });

  it('reports an async job failed when its hold was final before the queued settlement', async () => {
    await fixture.putModel('acme/outbox-late', chatModel([fixture.node.url]));
    const holdId = await fixture.hold('acme/outbox-late', { inputTokens: 40 });
    await fixture.billing.call('POST', `/holds/${holdId}/void`);
    consumer = await startBillingConsumer();
    const jobId = `job-${holdId}`;
    const settlement: BillingSettlementPayload = {
      ...settlementOf(holdId, jobId),
      completed: {
        jobId,
        accountId: fixture.account.accountId,
        model: 'acme/outbox-late',
        webhookUrl: 'https://hooks.example.com/done',
        runtimeMs: 5,
        completedAtMs: Date.now(),
        status: 'succeeded',
        usage: { promptTokens: 12, completionTokens: 7 },
        results: [{ generated_text: 'never delivered' }],
      },
    };
    await consumer.bus.publish(
      { queue: gatewayNames(fixture.prefix).queues.billingSettlements },
      makeEnvelope('billing.settlement', settlement),
    );
    const completion = await fixture.client.waitForCompletion(jobId, 10_000);
    expect(completion).toMatchObject({ status: 'failed', costMicroDzd: null });
    expect(completion).not.toHaveProperty('results');
    expect((await fixture.billing.hold(holdId)).status).toBe('voided');
  });
});
