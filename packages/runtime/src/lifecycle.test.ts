import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger } from '@gateway/observability';
import { Lifecycle } from './lifecycle.js';

const silentLogger = () =>
  createLogger({
    service: 'test',
    destination: new Writable({
      write(_c, _e, cb) {
        cb();
      },
    }),
  });

describe('Lifecycle', () => {
  it('runs shutdown steps once, in registration order, and exits 0', async () => {
    const order: string[] = [];
    const exits: number[] = [];
    const lifecycle = new Lifecycle({
      logger: silentLogger(),
      shutdownTimeoutMs: 1000,
      exit: (c) => exits.push(c),
    });
    lifecycle.onShutdown('http', async () => void order.push('http'));
    lifecycle.onShutdown('consumers', async () => void order.push('consumers'));
    lifecycle.onShutdown('connections', async () => void order.push('connections'));
    expect(lifecycle.isShuttingDown).toBe(false);
    const [first, second] = await Promise.all([
      lifecycle.shutdown('test'),
      lifecycle.shutdown('again'),
    ]);
    expect(lifecycle.isShuttingDown).toBe(true);
    expect(order).toEqual(['http', 'consumers', 'connections']);
    expect([first, second, exits]).toEqual([0, 0, [0]]);
  });

  it('flushes traces after every step (their last spans included), a failed flush not failing the exit', async () => {
    const order: string[] = [];
    const exits: number[] = [];
    const lifecycle = new Lifecycle({
      logger: silentLogger(),
      shutdownTimeoutMs: 1000,
      exit: (c) => exits.push(c),
      afterSteps: async () => {
        order.push('flush traces');
        throw new Error('collector unreachable');
      },
    });
    lifecycle.onShutdown('http', async () => void order.push('http'));
    lifecycle.onShutdown('connections', async () => void order.push('connections'));
    expect(await lifecycle.shutdown('test')).toBe(0);
    expect([order, exits]).toEqual([['http', 'connections', 'flush traces'], [0]]);
  });

  it("exits 1 after a failure's shutdown (a crash, a start that could not finish)", async () => {
    const exits: number[] = [];
    const ran: string[] = [];
    const lifecycle = new Lifecycle({
      logger: silentLogger(),
      shutdownTimeoutMs: 1000,
      exit: (c) => exits.push(c),
    });
    lifecycle.onShutdown('http', async () => void ran.push('http'));
    expect(await lifecycle.shutdown('uncaught exception', true)).toBe(1);
    expect([ran, exits]).toEqual([['http'], [1]]);
  });

  it('still runs later steps when one fails, and exits 1', async () => {
    const order: string[] = [];
    const exits: number[] = [];
    const lifecycle = new Lifecycle({
      logger: silentLogger(),
      shutdownTimeoutMs: 1000,
      exit: (c) => exits.push(c),
    });
    lifecycle.onShutdown('broken', async () => {
      throw new Error('close failed');
    });
    lifecycle.onShutdown('after', async () => void order.push('after'));
    expect(await lifecycle.shutdown('test')).toBe(1);
    expect(order).toEqual(['after']);
    expect(exits).toEqual([1]);
  });

  it('exits 1 when a step outlives the shutdown budget', async () => {
    const exits: number[] = [];
    const lifecycle = new Lifecycle({
      logger: silentLogger(),
      shutdownTimeoutMs: 50,
      exit: (c) => exits.push(c),
    });
    lifecycle.onShutdown('hangs', () => new Promise((resolve) => setTimeout(resolve, 300)));
    void lifecycle.shutdown('test');
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(exits).toEqual([1]);
  });
});
