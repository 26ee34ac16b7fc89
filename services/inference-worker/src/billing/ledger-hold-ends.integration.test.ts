import { afterAll, describe, expect, it } from '@jest/globals';
import { waitFor } from '@gateway/testing';
import { admitHold } from '../../../billing/src/testing/billing-under-test.suite.js';
import {
  startSettlementConsumerFor,
  type BillingConsumer,
} from '../testing/settlement-consumer.suite.js';
import {
  chatModel,
  contentOf,
  expectedCost,
  useWorkerFixture,
  type WorkerFixture,
} from '../testing/worker-fixture.suite.js';

/*
 * The worker ends its holds in billing's database itself (ADR 0070), as the role that may only
 * execute the two hold-ending functions: real billing, real PostgreSQL, real RabbitMQ. Billing's
 * API sees no settlement or void; the money is the same; and when the database is out of reach
 * the settlement is queued for billing exactly as when billing's API is.
 */

const holdEndPath = (path: string) =>
  /^\/internal\/v1\/holds\/([^/]+\/(settle|void)|settlements|voids)$/.test(path);

/** Publishes a chat job on `model` for a new hold; its id, hold and hold's prices. */
async function chatJob(fixture: WorkerFixture, model: string, content = 'Hello dunes.') {
  const { holdId, pricing } = await admitHold(fixture.billing, fixture.account, model, {
    inputTokens: 40,
  });
  const jobId = await fixture.client.publish({
    accountId: fixture.account.accountId,
    holdId,
    model,
    modelKind: 'chat',
    endpoint: 'chat.completions',
    request: { model, messages: [{ role: 'user', content }] },
    ...(pricing ? { pricing } : {}),
  });
  return { jobId, holdId };
}

describe('worker: holds ended in the ledger (ADR 0070)', () => {
  const fixture = useWorkerFixture({ ledger: (billing) => billing.ledgerUrl, maxAttempts: 1 });

  it("settles a job's hold in the ledger, with its cost and balance, and not over billing's API", async () => {
    await fixture.putModel('acme/ledger', chatModel([fixture.node.url]));
    const before = await fixture.billing.postedBalance(fixture.account.accountId);
    const { jobId, holdId } = await chatJob(fixture, 'acme/ledger');
    const { end } = await fixture.client.waitForEnd(jobId, 20_000);
    expect(end.type).toBe('final');
    expect(contentOf(end.data).length).toBeGreaterThan(0);
    const cost = expectedCost(end.usage!);
    expect(end.costMicroDzd).toBe(String(cost));
    expect(end.settlementPending).toBeUndefined();
    expect(end.balanceMicroDzd).toBe(String(before - cost));
    const hold = await fixture.billing.hold(holdId);
    expect(hold).toMatchObject({ status: 'settled', settled: cost });
    expect(await fixture.billing.ledgerTransactionsOf(holdId)).toBe(1);
    expect(fixture.billing.paths.filter(holdEndPath)).toEqual([]);
  });

  it('voids the hold of a job that failed, in the ledger', async () => {
    await fixture.putModel('acme/ledger-broken', chatModel(['http://127.0.0.1:9']));
    const before = await fixture.billing.postedBalance(fixture.account.accountId);
    const { jobId, holdId } = await chatJob(fixture, 'acme/ledger-broken');
    const { end } = await fixture.client.waitForEnd(jobId, 20_000);
    expect(end.type).toBe('error');
    expect((await fixture.billing.hold(holdId)).status).toBe('voided');
    expect(await fixture.billing.postedBalance(fixture.account.accountId)).toBe(before);
    expect(fixture.billing.paths.filter(holdEndPath)).toEqual([]);
  });

  it('settles concurrent jobs each once, at its own cost', async () => {
    await fixture.putModel('acme/ledger-many', chatModel([fixture.node.url]));
    const before = await fixture.billing.postedBalance(fixture.account.accountId);
    const jobs = await Promise.all(
      Array.from({ length: 12 }, (_, i) => chatJob(fixture, 'acme/ledger-many', `Dune ${i}.`)),
    );
    const ends = await Promise.all(jobs.map(({ jobId }) => fixture.client.waitForEnd(jobId)));
    let charged = 0n;
    for (const [i, { end }] of ends.entries()) {
      const cost = expectedCost(end.usage!);
      charged += cost;
      expect(await fixture.billing.hold(jobs[i]!.holdId)).toMatchObject({ settled: cost });
      expect(await fixture.billing.ledgerTransactionsOf(jobs[i]!.holdId)).toBe(1);
    }
    expect(await fixture.billing.postedBalance(fixture.account.accountId)).toBe(before - charged);
  });
});

describe('worker: holds of keys with budgets and tokens per minute, ended in the ledger', () => {
  const fixture = useWorkerFixture({ ledger: (billing) => billing.ledgerUrl, maxAttempts: 1 });

  // Their triggers run at commit, after the worker's function returned: they must not need the
  // worker role's rights (it has none on budgets or the tokens windows).
  it('settles them in the ledger, counting the cost against the budget', async () => {
    const { accountId } = fixture.account;
    await fixture.billing.operator('PUT', `/accounts/${accountId}/api-keys/auto/budget`, {
      limit_dzd: 100,
      period: 'total',
    });
    await fixture.billing.operator('PUT', `/accounts/${accountId}/api-keys/auto/rate-limit`, {
      tokens_per_minute: 1_000_000,
    });
    await fixture.putModel('acme/ledger-budget', chatModel([fixture.node.url]));
    const { jobId, holdId } = await chatJob(fixture, 'acme/ledger-budget');
    const { end } = await fixture.client.waitForEnd(jobId, 20_000);
    expect(end.type).toBe('final');
    expect(end.settlementPending).toBeUndefined();
    const cost = expectedCost(end.usage!);
    expect(await fixture.billing.hold(holdId)).toMatchObject({ status: 'settled', settled: cost });
    const budget = await fixture.billing.operator<{ spent_micro_dzd: string }>(
      'GET',
      `/accounts/${accountId}/api-keys/auto/budget`,
    );
    expect(budget.spent_micro_dzd).toBe(String(cost));
    expect(fixture.billing.paths.filter(holdEndPath)).toEqual([]);
  });
});

describe('worker: the ledger out of reach', () => {
  // Nothing listens on port 9: every connection is refused, as when PostgreSQL is away.
  const fixture = useWorkerFixture({
    ledger: () => 'postgres://worker_ledger@127.0.0.1:9/billing',
    billingAttempts: 1,
  });
  let consumer: BillingConsumer | undefined;
  afterAll(async () => consumer?.stop());

  it('queues the settlement for billing, which applies it once', async () => {
    await fixture.putModel('acme/ledger-away', chatModel([fixture.node.url]));
    const { jobId, holdId } = await chatJob(fixture, 'acme/ledger-away');
    const { end } = await fixture.client.waitForEnd(jobId, 20_000);
    expect(end.type).toBe('final');
    expect(end.settlementPending).toBe(true);
    expect(end.costMicroDzd).toBe(String(expectedCost(end.usage!)));
    expect((await fixture.billing.hold(holdId)).status).toBe('pending');
    consumer = await startSettlementConsumerFor(fixture);
    const hold = await waitFor(
      async () => {
        const view = await fixture.billing.hold(holdId);
        return view.status === 'settled' ? view : undefined;
      },
      10_000,
      'the queued settlement applied',
    );
    expect(hold.settled).toBe(expectedCost(end.usage!));
    expect(await fixture.billing.ledgerTransactionsOf(holdId)).toBe(1);
  });
});
