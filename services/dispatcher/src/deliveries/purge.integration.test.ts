import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startReceiver, type Receiver } from '../testing/receiver.suite.js';
import { createTestCertificates, type TestCertificates } from '../testing/test-ca.suite.js';
import { completedEvent, startHarness, type Harness } from '../testing/harness.suite.js';

// Long enough that the steps before the retention time fit in it on a loaded machine.
const RETENTION_MS = 2_500;

describe('retention: payloads are purged, the attempt log stays', () => {
  let certs: TestCertificates;
  let receiver: Receiver;
  let harness: Harness;

  beforeAll(async () => {
    certs = createTestCertificates();
    receiver = await startReceiver(certs);
    harness = await startHarness({
      extraCaPem: certs.caPem,
      // The second attempt is due long after the retention ends.
      env: { RETENTION_MS: String(RETENTION_MS), RETRY_SCHEDULE_A_MS: '0,60000' },
    });
  });

  afterAll(async () => {
    await harness?.close();
    await receiver?.close();
    certs?.remove();
  });

  const row = async (id: string) =>
    (
      await harness.pool.query<{ status: string; purged: boolean; attempts: string }>(
        `SELECT status, payload_ciphertext IS NULL AND payload_purged_at IS NOT NULL AS purged,
                (SELECT count(*) FROM webhook_attempts WHERE delivery_id = d.id) AS attempts
           FROM webhook_deliveries d WHERE id = $1`,
        [id],
      )
    ).rows[0]!;

  it('purges at the retention time, keeps the attempts and drops what was still waiting', async () => {
    receiver.setResponder('/flaky', () => ({ status: 500 }));
    const delivered = await harness.dispatcher.intake.accept(completedEvent(receiver.url('/ok')));
    const waiting = await harness.dispatcher.intake.accept(completedEvent(receiver.url('/flaky')));
    await harness.dispatcher.loop.tick();
    await harness.dispatcher.loop.idle();
    expect(await row(delivered.deliveryId)).toEqual({
      status: 'delivered',
      purged: false,
      attempts: '1',
    });
    expect(await row(waiting.deliveryId)).toEqual({
      status: 'retrying',
      purged: false,
      attempts: '1',
    });

    await harness.dispatcher.loop.tick(); // before the retention time: nothing to purge
    expect((await row(delivered.deliveryId)).purged).toBe(false);

    await sleep(RETENTION_MS + 50);
    await harness.dispatcher.loop.tick();
    expect(await row(delivered.deliveryId)).toEqual({
      status: 'delivered',
      purged: true,
      attempts: '1',
    });
    expect(await row(waiting.deliveryId)).toEqual({
      status: 'dropped',
      purged: true,
      attempts: '1',
    });

    const metrics = await harness.metrics.registry.metrics();
    expect(metrics).toMatch(/dispatcher_purged_payloads_total\{[^}]*\} 2/);
    expect(metrics).toMatch(/dispatcher_webhook_attempts_total\{outcome="delivered"[^}]*\} 1/);
  });

  it('a purged delivery cannot be redelivered', async () => {
    const { deliveryId } = await harness.dispatcher.intake.accept(
      completedEvent(receiver.url('/ok')),
    );
    await harness.dispatcher.loop.tick();
    await harness.dispatcher.loop.idle();
    expect(await harness.dispatcher.deliveries.redeliver(deliveryId)).toMatchObject({
      outcome: 'queued',
    });
    await harness.dispatcher.loop.tick();
    await harness.dispatcher.loop.idle();
    await sleep(RETENTION_MS + 50);
    await harness.dispatcher.loop.tick();
    expect(await harness.dispatcher.deliveries.redeliver(deliveryId)).toEqual({
      outcome: 'purged',
    });
  });
});
