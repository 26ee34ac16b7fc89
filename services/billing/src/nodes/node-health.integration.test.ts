import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { NODE_HEALTH_BATCH_MAX } from '@gateway/contracts';
import {
  putChatModel,
  startBillingApi,
  type BillingApiUnderTest,
} from '../http/billing-api.suite.js';

describe('node health', () => {
  let billing: BillingApiUnderTest;
  const secretNode = 'http://user:s3cret@127.0.0.1:9/v1?api_key=k3y';
  const report = (nodes: unknown[], as: 'edge' | 'worker' = 'worker') =>
    billing.call('post', '/nodes/health', as).send({ workerId: 'w-1', nodes });
  const healthOf = async () =>
    (await billing.call('get', '/admin/nodes/health')).body.nodes as Record<string, unknown>[];

  beforeAll(async () => {
    billing = await startBillingApi({ entriesStableAfterMs: 0 });
    const model = await putChatModel(billing, {
      id: 'acme/health-1',
      inputPriceDzdPerM: 1,
      outputPriceDzdPerM: 1,
      maxOutputTokens: 100,
      nodes: [secretNode, 'http://127.0.0.1:10'],
    });
    expect(model.status).toBe(200);
  });

  afterAll(async () => {
    await billing?.close();
  });

  it('takes reports from the worker alone, and reads are the operator API (edge) alone', async () => {
    const node = { url: 'http://127.0.0.1:10', healthy: true, observedAtMs: Date.now() };
    const byEdge = await report([node], 'edge');
    expect([byEdge.status, byEdge.body.error.code]).toEqual([403, 'forbidden']);
    const readByWorker = await billing.call('get', '/admin/nodes/health', 'worker');
    expect(readByWorker.status).toBe(403);
  });

  it('refuses malformed or oversized batches', async () => {
    const node = { url: 'http://127.0.0.1:10', healthy: true, observedAtMs: Date.now() };
    for (const nodes of [
      [],
      [{ ...node, healthy: 'yes' }],
      [{ ...node, lastErrorKind: 'the prompt was rude' }],
      [{ ...node, extra: 1 }],
      Array.from({ length: NODE_HEALTH_BATCH_MAX + 1 }, () => node),
    ]) {
      const refused = await report(nodes);
      expect([refused.status, refused.body.error.code]).toEqual([400, 'invalid_request_body']);
    }
  });

  it('shows each catalog node as down, healthy or unknown, never with its credentials', async () => {
    expect((await healthOf()).map((n) => n.health)).toEqual(['unknown', 'unknown']);
    const down = {
      url: secretNode,
      healthy: false,
      observedAtMs: Date.now(),
      lastErrorKind: 'unreachable',
    };
    expect((await report([down])).status).toBe(200);
    const [first, second] = await healthOf();
    expect(first).toMatchObject({
      model: 'acme/health-1',
      url: 'http://127.0.0.1:9/v1',
      health: 'down',
      lastErrorKind: 'unreachable',
      workerId: 'w-1',
    });
    expect(JSON.stringify(await healthOf())).not.toMatch(/s3cret|k3y/);
    expect(second?.health).toBe('unknown');

    // An older report does not undo a newer one; a fresh one does.
    await report([{ url: secretNode, healthy: true, observedAtMs: Date.now() - 10_000 }]);
    expect((await healthOf())[0]?.health).toBe('down');
    await report([{ url: secretNode, healthy: true, observedAtMs: Date.now() }]);
    expect((await healthOf())[0]).toMatchObject({ health: 'healthy', lastErrorKind: null });
  });

  it('reads a report older than two minutes as unknown', async () => {
    const old = {
      url: 'http://127.0.0.1:10',
      healthy: true,
      observedAtMs: Date.now() - 3 * 60_000,
    };
    expect((await report([old])).status).toBe(200);
    expect((await healthOf())[1]).toMatchObject({ health: 'unknown', workerId: 'w-1' });
  });
});
