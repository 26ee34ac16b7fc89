import { describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { createLogger } from '@gateway/observability';
import { silentStream } from '../testing/silent-log.suite.js';
import { HoldReleases, type ReleaseRequest } from './hold-release.js';

/** The hold of an answer that reached nobody, when billing does not answer at that moment. */

const log = createLogger({ service: 'edge', destination: silentStream });
const unavailable = () => new GatewayError('service_unavailable', 'billing is unreachable');

/** Billing whose void fails `failures` times, then finds the hold settled by the worker. */
function billingAwayThenSettled(failures: number) {
  const calls: string[] = [];
  let failuresLeft = failures;
  const billing = {
    void: async () => {
      calls.push('void');
      if (failuresLeft-- > 0) throw unavailable();
      return { kind: 'already_final' as const, reason: 'settled' };
    },
    refund: async () => {
      calls.push('refund');
      return { status: 'refunded' as const, refundedMicroDzd: 9n };
    },
  };
  return { billing, calls };
}

const request = (ifSettled: ReleaseRequest['ifSettled']): ReleaseRequest => ({
  holdId: 'hold_1',
  jobId: 'chatcmpl-1',
  ifSettled,
  log,
});

function releases(billing: ReturnType<typeof billingAwayThenSettled>['billing']) {
  return new HoldReleases({ billing, minBackoffMs: 5, maxBackoffMs: 10, retries: 5 });
}

describe('HoldReleases', () => {
  it('refunds a settled hold in the background once billing answers again', async () => {
    const { billing, calls } = billingAwayThenSettled(2);
    const holds = releases(billing);
    let done: string | undefined;
    await expect(holds.release(request('refund'), (release) => (done = release))).resolves.toBe(
      'unknown',
    );
    expect(holds.pending).toBe(1);
    await waitFor(() => done !== undefined);
    expect(done).toBe('refunded');
    expect(calls).toEqual(['void', 'void', 'void', 'refund']);
    expect(holds.pending).toBe(0);
  });

  it('keeps the charge of a job whose output reached someone', async () => {
    const { billing, calls } = billingAwayThenSettled(0);
    await expect(releases(billing).release(request('keep'))).resolves.toBe('kept');
    expect(calls).toEqual(['void']);
  });

  it('does not retry what billing refused (a client error)', async () => {
    const billing = {
      void: async () => {
        throw new GatewayError('not_found', 'no such hold');
      },
      refund: async () => ({ status: 'refunded' as const, refundedMicroDzd: 0n }),
    };
    const holds = new HoldReleases({ billing });
    await expect(holds.release(request('refund'))).resolves.toBe('unknown');
    expect(holds.pending).toBe(0);
  });

  it('bounds the releases retried at once, and stops them when edge stops', async () => {
    const { billing, calls } = billingAwayThenSettled(Number.POSITIVE_INFINITY);
    const holds = new HoldReleases({ billing, maxPending: 1, minBackoffMs: 60_000 });
    await holds.release(request('refund'));
    await holds.release(request('refund'));
    expect(holds.pending).toBe(1);
    holds.stop();
    await waitFor(() => holds.pending === 0);
    // Each release's own attempt; no background attempt ran (the first waits a minute).
    expect(calls).toEqual(['void', 'void']);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let waitedMs = 0; !condition(); waitedMs += 5) {
    if (waitedMs > 5_000) throw new Error('condition not met in 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
