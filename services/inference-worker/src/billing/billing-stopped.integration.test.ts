import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createStandInModelNode, type StandInModelNode } from '@gateway/stand-ins';
import {
  fundAccount,
  spawnService,
  testAmqpUrl,
  uniquePrefix,
  waitFor,
  type FundedAccount,
  type ServiceProcess,
  type TestDatabase,
} from '@gateway/testing';
import pg from 'pg';
import { createBillingDatabase } from '../../../billing/src/testing/billing-under-test.suite.js';
import {
  adminOperator,
  admitHold,
  billingCaller,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { JobClient, startWorker } from '../testing/worker-harness.suite.js';
import { chatModel, contentOf, expectedCost, PRICES } from '../testing/worker-fixture.suite.js';

/*
 * Billing unreachable when the worker settles, against the real billing process: stopped
 * (SIGSTOP) while the worker settles, the job is still answered once and the model called once;
 * resumed (SIGCONT), billing applies the queued settlement itself (its own consumer of
 * billing.settlements), once.
 */

const billingEntry = path.resolve('services', 'billing', 'dist', 'main.js');
const prefix = uniquePrefix('billing-stopped');
const edgeToken = randomBytes(32).toString('hex');
const workerToken = randomBytes(32).toString('hex');

let db: TestDatabase;
let billingProcess: ServiceProcess;
let sql: pg.Client;
let billing: BillingSlice;
let node: StandInModelNode;
let client: JobClient;
let worker: { stop(): Promise<void> };
let account: FundedAccount;

/** The slice of the in-process harness the helpers use, over the spawned billing. */
type BillingSlice = Pick<BillingUnderTest, 'url' | 'workerToken' | 'call' | 'operator'>;
const harnessOf = (url: string): BillingSlice => {
  const call = billingCaller(url, edgeToken, workerToken);
  return { url, workerToken, call, operator: adminOperator(call) };
};

async function holdRow(holdId: string) {
  const { rows } = await sql.query<{ status: string; settled: string | null; txns: string }>(
    `SELECT status, settled_amount_micro_dzd AS settled,
            (SELECT count(*) FROM ledger_transactions WHERE hold_id = $1) AS txns
       FROM holds WHERE id = $1`,
    [holdId],
  );
  return rows[0]!;
}

beforeAll(async () => {
  db = await createBillingDatabase();
  billingProcess = await spawnService({
    entry: billingEntry,
    env: {
      AMQP_URL: testAmqpUrl(),
      AMQP_PREFIX: prefix,
      DATABASE_URL: db.runtimeUrl,
      EDGE_INTERNAL_TOKEN: edgeToken,
      WORKER_INTERNAL_TOKEN: workerToken,
      MASTER_KEY: randomBytes(32).toString('base64'),
    },
  });
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  billing = harnessOf(billingProcess.baseUrl);
  node = await createStandInModelNode({ tokensPerSecond: 0, firstTokenLatencyMs: 0 });
  account = await fundAccount(billing.operator, { creditDzd: 100 });
  await billing.call('PUT', '/admin/models/acme/chat', { ...PRICES, ...chatModel([node.url]) });
  client = await JobClient.start(prefix);
  worker = await startWorker(billing, prefix, { billingAttempts: 2 });
}, 60_000);

afterAll(async () => {
  billingProcess?.child.kill('SIGCONT');
  await worker?.stop();
  await client?.close();
  await node?.close();
  await billingProcess?.stop('SIGTERM');
  await sql?.end();
  await db?.drop();
});

describe('worker: the real billing stopped while the job settles', () => {
  it('answers once, calls the model once, and billing settles the queued settlement once when resumed', async () => {
    const { holdId } = await admitHold(billing, account, 'acme/chat', { inputTokens: 50 });
    // The worker reads the catalog before the model call (no cache in this harness): billing is
    // stopped only once the model call is under way, so the settle is what finds it stopped.
    node.setOptions({ firstTokenLatencyMs: 1_500 });
    const jobId = await client.publish({
      accountId: account.accountId,
      holdId,
      model: 'acme/chat',
      modelKind: 'chat',
      endpoint: 'chat.completions',
      request: { model: 'acme/chat', messages: [{ role: 'user', content: 'Count the dunes.' }] },
    });
    await waitFor(() => node.stats().outstanding > 0 || undefined, 10_000, 'the model call');
    billingProcess.child.kill('SIGSTOP');
    try {
      const { end } = await client.waitForEnd(jobId, 40_000);
      expect(end.type).toBe('final');
      expect(contentOf(end.data).length).toBeGreaterThan(0);
      expect(end.costMicroDzd).toBeUndefined();
      expect(node.stats().byPath['/v1/chat/completions']).toBe(1);
      billingProcess.child.kill('SIGCONT');
      const hold = await waitFor(
        async () => {
          const row = await holdRow(holdId);
          return row.status === 'settled' ? row : undefined;
        },
        20_000,
        'the queued settlement applied by billing',
      );
      expect(BigInt(hold.settled!)).toBe(expectedCost(end.usage!));
      expect(Number(hold.txns)).toBe(1);
      expect(node.stats().byPath['/v1/chat/completions']).toBe(1);
      expect(client.repliesOf(jobId).filter((reply) => reply.type !== 'chunk')).toHaveLength(1);
    } finally {
      billingProcess.child.kill('SIGCONT');
    }
  }, 90_000);
});
