import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Keyring } from '@gateway/crypto';
import { completedEvent } from '../testing/harness.suite.js';
import type { DeliveryRepository, NewDelivery } from './delivery-repository.js';
import { DeliveryIntake } from './intake.js';
import type { RetryPolicy } from './schedule.js';

const policy: RetryPolicy = { delaysMs: [0, 1_000], jitterRatio: 0, random: () => 0 };

const event = (jobId: string) => completedEvent('https://hooks.example/in', { jobId });

/**
 * A repository that records how the intake stores: a batch statement that fails whenever it
 * holds a job named `bad…`, and single inserts that fail for that job only.
 */
function recordingRepository() {
  const calls: { batches: string[][]; singles: string[] } = { batches: [], singles: [] };
  const refuse = (delivery: NewDelivery) => {
    if (delivery.jobId.startsWith('bad')) throw new Error('constraint violated');
  };
  const repository = {
    insertMany: async (deliveries: NewDelivery[]) => {
      calls.batches.push(deliveries.map((delivery) => delivery.jobId));
      deliveries.forEach(refuse);
      return deliveries.map(() => true);
    },
    insert: async (delivery: NewDelivery) => {
      calls.singles.push(delivery.jobId);
      refuse(delivery);
      return true;
    },
  } as unknown as DeliveryRepository;
  return { repository, calls };
}

const intakeWith = (repository: DeliveryRepository) =>
  new DeliveryIntake({
    repository,
    box: Keyring.parse(randomBytes(32).toString('base64')),
    retentionMs: 60_000,
    policies: { A: policy, B: policy },
  });

describe('delivery intake: events arriving together are stored together', () => {
  it('stores what queued behind the statements in flight in one statement', async () => {
    const { repository, calls } = recordingRepository();
    const intake = intakeWith(repository);
    const jobs = Array.from({ length: 6 }, () => `job-${randomUUID()}`);
    const stored = await Promise.all(jobs.map((jobId) => intake.accept(event(jobId))));
    expect(stored.every((result) => result.created)).toBe(true);
    // Two go at once, alone; the four that arrived meanwhile go as one statement.
    expect(calls.singles).toEqual(jobs.slice(0, 2));
    expect(calls.batches).toEqual([jobs.slice(2)]);
  });

  it('one delivery that cannot be stored fails its own event only', async () => {
    const { repository, calls } = recordingRepository();
    const intake = intakeWith(repository);
    const jobs = ['first', 'second', 'good', 'bad-one', 'also-good'].map(
      (name) => `${name}-${randomUUID()}`,
    );
    const results = await Promise.allSettled(jobs.map((jobId) => intake.accept(event(jobId))));
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    // The failed batch is stored again item by item.
    expect(calls.batches).toEqual([jobs.slice(2)]);
    expect(calls.singles).toEqual([...jobs.slice(0, 2), ...jobs.slice(2)]);
  });
});
