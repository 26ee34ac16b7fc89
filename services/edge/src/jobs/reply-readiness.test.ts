import { describe, expect, it } from '@jest/globals';
import type { MessageBus } from '@gateway/messaging';
import { createLogger } from '@gateway/observability';
import { silentStream } from '../testing/silent-log.suite.js';
import { ReplyRouter } from './job-replies.js';

/*
 * Edge's HTTP server listens before its reply queue is consumed. A client (or a load balancer)
 * that waited for `/readyz` must then not be told 503 "starting" by the job path: the reply
 * queue is one of edge's readiness checks, failing until it is consumed and while a queue lost
 * with its broker node is replaced.
 */

const log = createLogger({ service: 'edge', destination: silentStream });

/** A bus whose `consume` waits for `open()`; keeps the queue's loss callback. */
function gatedBus() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const lost: (() => void)[] = [];
  const bus = {
    declareQueue: async (_spec: unknown, options: { onLost: () => void }) => {
      lost.push(options.onLost);
    },
    consume: async () => {
      await opened;
      return { cancel: async () => {} };
    },
  } as unknown as MessageBus;
  return { bus, open, lose: () => lost.at(-1)!() };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('ReplyRouter readiness', () => {
  it('fails until the reply queue is consumed, then passes', async () => {
    const { bus, open } = gatedBus();
    const router = new ReplyRouter({ bus, prefix: 't.', logger: log });
    const { name, check } = router.readiness;
    expect(name).toBe('replies');
    await expect(check()).rejects.toThrow('reply queue not consumed yet');

    const started = router.start();
    await settle();
    await expect(check()).rejects.toThrow('reply queue not consumed yet');
    open();
    await started;
    await expect(check()).resolves.toBeUndefined();
  });

  it('fails while a lost queue is replaced, and after the router stopped', async () => {
    const first = gatedBus();
    const router = new ReplyRouter({ bus: first.bus, prefix: 't.', logger: log });
    first.open();
    await router.start();
    await expect(router.readiness.check()).resolves.toBeUndefined();

    // The replacement's consume is already open: the router is ready again once it ran.
    first.lose();
    await expect(router.readiness.check()).rejects.toThrow('reply queue not consumed yet');
    await settle();
    await expect(router.readiness.check()).resolves.toBeUndefined();

    await router.stop();
    await expect(router.readiness.check()).rejects.toThrow('reply queue not consumed yet');
  });
});
