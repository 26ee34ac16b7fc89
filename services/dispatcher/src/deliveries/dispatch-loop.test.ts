import { afterEach, describe, expect, it } from '@jest/globals';
import { createLogger } from '@gateway/observability';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { createDispatcherMetrics } from '../metrics.js';
import type { SigningSecrets } from '../secrets/signing-secrets.js';
import type { ClaimedDelivery, DeliveryRepository } from './delivery-repository.js';
import { DispatchLoop } from './dispatch-loop.js';

const started: { finishAll(): Promise<void>; loop: DispatchLoop }[] = [];

// A failed assertion leaves attempts hanging: end them, so that the loop stops either way.
afterEach(async () => {
  for (const h of started.splice(0)) {
    await h.finishAll();
    await h.loop.stop();
  }
});

/**
 * The loop over an in-memory repository that claims as the real one does: due deliveries in the
 * order they fell due, those of the crowded accounts after every other account's. Attempts end
 * when the test says so.
 */
function harness(options: { concurrency: number; accountConcurrency: number }) {
  const due: { id: string; accountId: string }[] = [];
  const crowdedAtClaims: string[][] = [];
  const running = new Map<string, () => void>();
  const repository = {
    claimDue: (limit: number, _leaseMs: number, crowded: readonly string[] = []) => {
      crowdedAtClaims.push([...crowded]);
      const order = [
        ...due.filter((d) => !crowded.includes(d.accountId)),
        ...due.filter((d) => crowded.includes(d.accountId)),
      ].slice(0, limit);
      for (const taken of order) due.splice(due.indexOf(taken), 1);
      return Promise.resolve(order.map((d) => ({ ...d }) as ClaimedDelivery));
    },
    purgeExpired: () => Promise.resolve(0),
  } as unknown as DeliveryRepository;
  const loop = new DispatchLoop({
    repository,
    secrets: { purgeExpired: () => Promise.resolve(0) } as unknown as SigningSecrets,
    attempt: (claim) => new Promise<void>((end) => running.set(claim.id, end)),
    metrics: createDispatcherMetrics(new Registry(), () => Promise.resolve(0)),
    logger: createLogger({
      service: 'test',
      destination: new Writable({ write: (_c, _e, done) => done() }),
    }),
    intervalMs: 60_000,
    batchSize: 100,
    leaseMs: 10_000,
    ...options,
  });
  const queue = (accountId: string, ...ids: string[]) =>
    ids.forEach((id) => due.push({ id, accountId }));
  const finish = async (id: string) => {
    running.get(id)?.();
    running.delete(id);
    // The attempt's end frees its slot, then the loop claims again (a timer of 0 ms).
    await new Promise((resolve) => setTimeout(resolve, 20));
  };
  /** Ends every attempt, those the loop starts meanwhile too. */
  const finishAll = async () => {
    while (running.size > 0) for (const id of [...running.keys()]) await finish(id);
  };
  started.push({ finishAll, loop });
  return { loop, queue, finish, finishAll, running, crowdedAtClaims };
}

describe('dispatch loop: slots shared between accounts', () => {
  it("claims another account's delivery at the first free slot while one account's attempts hang", async () => {
    const h = harness({ concurrency: 4, accountConcurrency: 2 });
    h.queue('acct_slow', 's1', 's2', 's3', 's4', 's5', 's6');
    await h.loop.tick({ purge: false });
    // Nobody else had anything due: the slow account took every slot.
    expect([...h.running.keys()]).toEqual(['s1', 's2', 's3', 's4']);
    // Another account's delivery falls due behind the slow account's backlog (s5, s6).
    h.queue('acct_other', 'o1');
    await h.loop.tick({ purge: false });
    expect(h.running.has('o1')).toBe(false); // no slot free yet
    await h.finish('s1');
    expect(h.running.has('o1')).toBe(true);
    expect(h.running.has('s5')).toBe(false);
    expect(h.crowdedAtClaims.at(-1)).toEqual(['acct_slow']);
    // Then the slow account gets the slots nobody else needs.
    await h.finish('s2');
    expect(h.running.has('s5')).toBe(true);
  });

  it('passes no crowded account while every account is under its share', async () => {
    const h = harness({ concurrency: 4, accountConcurrency: 2 });
    h.queue('acct_a', 'a1');
    h.queue('acct_b', 'b1');
    await h.loop.tick({ purge: false });
    h.queue('acct_a', 'a2');
    await h.loop.tick({ purge: false });
    expect(h.crowdedAtClaims).toEqual([[], []]);
    h.queue('acct_a', 'a3');
    await h.loop.tick({ purge: false });
    // acct_a now has two attempts in flight: its share.
    expect(h.crowdedAtClaims.at(-1)).toEqual(['acct_a']);
    await h.finishAll();
    h.queue('acct_a', 'a4');
    await h.loop.tick({ purge: false });
    // Its attempts ended: no longer crowded.
    expect(h.crowdedAtClaims.at(-1)).toEqual([]);
  });
});
