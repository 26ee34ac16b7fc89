import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Keyring } from '@gateway/crypto';
import { createLogger } from '@gateway/observability';
import { rowAad } from '../crypto/row-aad.js';
import type { DispatcherMetrics } from '../metrics.js';
import type { WebhookClient } from '../outbound/webhook-client.js';
import type { SigningSecrets } from '../secrets/signing-secrets.js';
import { AttemptRunner } from './attempt.js';
import type { AttemptRecord, ClaimedDelivery, DeliveryRepository } from './delivery-repository.js';
import type { RetryPolicy } from './schedule.js';

const box = Keyring.parse(randomBytes(32).toString('base64'));
const policy: RetryPolicy = { delaysMs: [0, 1_000], jitterRatio: 0, random: () => 0 };

const claim = (id: string): ClaimedDelivery => ({
  id,
  webhookId: id,
  accountId: 'usr_attempts',
  format: 'A',
  sealed: box.seal(
    JSON.stringify({ url: 'https://hooks.example/in', body: '{}' }),
    rowAad('usr_attempts', id),
  ),
  roundAttemptCount: 0,
  leaseId: `lease-${id}`,
  traceParent: null,
  secrets: [],
});

/** Records how attempts are written: batches, and single records; `lost-…` lost its lease. */
function recordingRepository() {
  const calls: { batches: string[][]; singles: string[] } = { batches: [], singles: [] };
  const repository = {
    recordAttempts: async (records: { claim: ClaimedDelivery; attempt: AttemptRecord }[]) => {
      calls.batches.push(records.map((record) => record.claim.id));
      return records.map((record) => !record.claim.id.startsWith('lost'));
    },
    recordAttempt: async (delivery: ClaimedDelivery) => {
      calls.singles.push(delivery.id);
      return !delivery.id.startsWith('lost');
    },
  } as unknown as DeliveryRepository;
  return { repository, calls };
}

describe('attempt records: attempts ending together are recorded together', () => {
  it('records what ended behind the statements in flight in one statement', async () => {
    const { repository, calls } = recordingRepository();
    const outcomes: string[] = [];
    const runner = new AttemptRunner({
      repository,
      box,
      secrets: { claimed: async () => [{ secret: 'whsec_dGVzdA==' }] } as unknown as SigningSecrets,
      client: {
        post: async () => ({
          statusCode: 204,
          latencyMs: 1,
          failure: null,
          retryAfterMs: null,
          detail: null,
        }),
      } as unknown as WebhookClient,
      policies: { A: policy, B: policy },
      metrics: {
        attempts: { inc: ({ outcome }: { outcome: string }) => outcomes.push(outcome) },
      } as unknown as DispatcherMetrics,
      logger: createLogger({ service: 'dispatcher', level: 'silent' }),
    });
    const ids = ['d1', 'd2', 'd3', 'lost-d4', 'd5'];
    await Promise.all(ids.map((id) => runner.run(claim(id))));
    // Two go at once, alone; the three that ended meanwhile go as one statement.
    expect(calls.singles).toEqual(['d1', 'd2']);
    expect(calls.batches).toEqual([['d3', 'lost-d4', 'd5']]);
    // The one whose lease was lost is not counted as delivered.
    expect(outcomes).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
  });
});
