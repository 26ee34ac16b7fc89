import { describe, expect, it } from '@jest/globals';
import { gatewayNames } from '@gateway/messaging';
import { waitFor } from '@gateway/testing';
import { chatModel, useWorkerFixture } from '../testing/worker-fixture.suite.js';

/*
 * The worker as deployed on the broker: its own user, which may send replies to edge's reply
 * queues and nothing else of the job's choosing. A job whose `replyTo` names another queue
 * (only a compromised edge would send one) is answered to nobody: refused by the broker, it is
 * treated as undeliverable (refunded, acknowledged), not run again and again.
 */

const fixture = useWorkerFixture({ brokerUser: true });
const modelCalls = () =>
  fixture.node.requests().filter((request) => request.path.endsWith('/chat/completions')).length;

async function job(model: string, replyTo: string) {
  await fixture.putModel(model, chatModel([fixture.node.url]));
  const holdId = await fixture.hold(model, { inputTokens: 40 });
  fixture.node.clearRequests();
  const jobId = await fixture.client.publish({
    accountId: fixture.account.accountId,
    holdId,
    model,
    modelKind: 'chat',
    endpoint: 'chat.completions',
    request: { model, messages: [{ role: 'user', content: 'Hello' }] },
    replyTo,
  });
  return { holdId, jobId };
}

describe('worker as its own broker user', () => {
  it("replies to edge's reply queue and settles", async () => {
    const { holdId, jobId } = await job('acme/as-user', fixture.client.replyQueue);
    const { end } = await fixture.client.waitForEnd(jobId);
    expect(end.type).toBe('final');
    expect((await fixture.billing.hold(holdId)).status).toBe('settled');
  });

  it('treats a reply the broker refuses as undeliverable: refunded, run once', async () => {
    const before = await fixture.billing.postedBalance(fixture.account.accountId);
    // A queue the worker may not send to: webhook events are the dispatcher's.
    const { webhookCompletions } = gatewayNames(fixture.prefix).queues;
    const { holdId } = await job('acme/refused-reply', webhookCompletions);
    await waitFor(() => fixture.billing.refunded(holdId), 15_000, 'the refund');
    expect(await fixture.billing.postedBalance(fixture.account.accountId)).toBe(before);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(modelCalls()).toBe(1);
    expect(fixture.client.completions).toEqual([]);
  });
});
