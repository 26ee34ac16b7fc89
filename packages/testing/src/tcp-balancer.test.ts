import { afterEach, describe, expect, it, jest } from '@jest/globals';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTcpBalancer } from './tcp-balancer.js';

/** What each test opened, closed after it, last opened first. */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const closed = (socket: net.Socket) =>
  new Promise<void>((resolve) => {
    if (socket.destroyed) resolve();
    else socket.once('close', () => resolve());
  });

/** An upstream that echoes what it receives, noting when each connection and chunk came. */
async function startEcho() {
  const accepted: { socket: net.Socket; at: number; closed: Promise<void> }[] = [];
  const chunks: { text: string; at: number }[] = [];
  const server = net.createServer((socket) => {
    accepted.push({ socket, at: performance.now(), closed: closed(socket) });
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk) => {
      chunks.push({ text: chunk.toString(), at: performance.now() });
      if (socket.write(chunk)) return;
      socket.pause();
      socket.once('drain', () => socket.resume());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const { socket } of accepted) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as net.AddressInfo).port, accepted, chunks };
}

async function balancerTo(port: number) {
  const balancer = await startTcpBalancer([port]);
  cleanups.push(() => balancer.close());
  return balancer;
}

/** A client of the balancer that gathers what comes back. */
async function connect(port: number) {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  cleanups.push(() => void socket.destroy());
  await new Promise((resolve) => socket.once('connect', resolve));
  const client = {
    socket,
    received: '',
    closed: closed(socket),
    /** Resolves once `length` characters in all have come back, with when the last came. */
    until: (length: number) =>
      new Promise<number>((resolve) => {
        const check = () => {
          if (client.received.length < length) return;
          socket.off('data', check);
          resolve(performance.now());
        };
        socket.on('data', check);
        check();
      }),
  };
  socket.on('data', (chunk) => (client.received += chunk.toString()));
  return client;
}

type Client = Awaited<ReturnType<typeof connect>>;

/** Sends `text` and waits for its echo; the time it took. */
async function roundTrip(client: Client, text: string) {
  const start = performance.now();
  const done = client.until(client.received.length + text.length);
  client.socket.write(text);
  return (await done) - start;
}

describe('startTcpBalancer faults', () => {
  const STALL_MS = 300;
  const LATENCY_MS = 100;

  it('stall holds bytes both ways on an open connection, then delivers them intact', async () => {
    const echo = await startEcho();
    const balancer = await balancerTo(echo.port);
    const client = await connect(balancer.port);
    await roundTrip(client, 'warm-up;');
    const start = performance.now();
    balancer.stall(STALL_MS);
    const back = client.until('warm-up;down;up;'.length);
    echo.accepted[0]!.socket.write('down;');
    client.socket.write('up;');
    const end = await back;
    expect(echo.chunks.find((chunk) => chunk.text === 'up;')!.at - start).toBeGreaterThanOrEqual(
      0.8 * STALL_MS,
    );
    expect(end - start).toBeGreaterThanOrEqual(0.8 * STALL_MS);
    expect(client.received).toBe('warm-up;down;up;');
    expect(await roundTrip(client, 'after;')).toBeLessThan(0.5 * STALL_MS);
  });

  it('a stall while stalled lasts until the later end: never shortens, extends', async () => {
    const echo = await startEcho();
    const balancer = await balancerTo(echo.port);
    const client = await connect(balancer.port);
    await roundTrip(client, 'warm-up;');
    balancer.stall(STALL_MS);
    balancer.stall(STALL_MS / 5);
    expect(await roundTrip(client, 'not shortened;')).toBeGreaterThanOrEqual(0.8 * STALL_MS);
    const start = performance.now();
    balancer.stall(STALL_MS / 3);
    const trip = roundTrip(client, 'extended;');
    await sleep(STALL_MS / 6);
    balancer.stall(STALL_MS - STALL_MS / 6);
    await trip;
    expect(performance.now() - start).toBeGreaterThanOrEqual(0.8 * STALL_MS);
    expect(client.received).toBe('warm-up;not shortened;extended;');
  });

  it('connects a connection opened during a stall to its upstream only once it ends', async () => {
    const echo = await startEcho();
    const balancer = await balancerTo(echo.port);
    const start = performance.now();
    balancer.stall(STALL_MS);
    const client = await connect(balancer.port);
    expect(performance.now() - start).toBeLessThan(0.5 * STALL_MS);
    expect(echo.accepted).toHaveLength(0);
    await roundTrip(client, 'hello;');
    expect(echo.accepted).toHaveLength(1);
    expect(echo.accepted[0]!.at - start).toBeGreaterThanOrEqual(0.8 * STALL_MS);
    expect(client.received).toBe('hello;');
  });

  it('latency delays each direction of a round trip, and 0 restores it', async () => {
    const echo = await startEcho();
    const balancer = await balancerTo(echo.port);
    const client = await connect(balancer.port);
    await roundTrip(client, 'warm-up;');
    balancer.setLatencyMs(LATENCY_MS);
    // Both ways: there and back.
    expect(await roundTrip(client, 'slow;')).toBeGreaterThanOrEqual(0.9 * 2 * LATENCY_MS);
    balancer.setLatencyMs(0);
    expect(await roundTrip(client, 'fast;')).toBeLessThan(LATENCY_MS);
    expect(client.received).toBe('warm-up;slow;fast;');
  });

  it('keeps the stream in order when the latency drops midway', async () => {
    const echo = await startEcho();
    const balancer = await balancerTo(echo.port);
    const client = await connect(balancer.port);
    balancer.setLatencyMs(2 * LATENCY_MS);
    const sent = Array.from({ length: 40 }, (_, index) => `${index};`);
    for (const [index, chunk] of sent.entries()) {
      // The later chunks, sent with no latency, would otherwise overtake the earlier ones.
      if (index === sent.length / 2) balancer.setLatencyMs(0);
      client.socket.write(chunk);
      await sleep(3);
    }
    await client.until(sent.join('').length);
    expect(client.received).toBe(sent.join(''));
  });

  it('moves a large stream intact under latency, through backpressure', async () => {
    const echo = await startEcho();
    const balancer = await balancerTo(echo.port);
    const client = await connect(balancer.port);
    balancer.setLatencyMs(20);
    // More than the loopback socket buffers hold while the client reads nothing, so that `write`
    // returns false in the balancer, which must wait for `drain` (seen to happen at this size).
    const sent = Array.from({ length: 1_000_000 }, (_, index) => `${index};`).join('');
    client.socket.pause();
    client.socket.write(sent);
    await sleep(100);
    client.socket.resume();
    await client.until(sent.length);
    expect(client.received).toBe(sent);
  });

  it('cut closes every open connection, both sides, and new ones still get through', async () => {
    const echo = await startEcho();
    const balancer = await balancerTo(echo.port);
    const clients = [await connect(balancer.port), await connect(balancer.port)];
    for (const client of clients) await roundTrip(client, 'before;');
    expect(balancer.openConnections).toBe(4);
    balancer.cut();
    await Promise.all([...clients, ...echo.accepted].map((side) => side.closed));
    expect(balancer.openConnections).toBe(0);
    const after = await connect(balancer.port);
    await roundTrip(after, 'after;');
    expect(after.received).toBe('after;');
    expect(echo.accepted).toHaveLength(3);
  });

  it('close clears the stall and latency timers, so the process can exit', async () => {
    const echo = await startEcho();
    for (const fault of ['latency', 'stall'] as const) {
      const balancer = await balancerTo(echo.port);
      const client = await connect(balancer.port);
      await roundTrip(client, 'warm-up;');
      // Fake timers only (the clocks and the I/O stay real), to count the balancer's own.
      jest.useFakeTimers({
        doNotFake: ['Date', 'performance', 'hrtime', 'nextTick', 'setImmediate'],
      });
      try {
        if (fault === 'stall') balancer.stall(60_000);
        else balancer.setLatencyMs(60_000);
        client.socket.write('pending;');
        const deadline = Date.now() + 2_000;
        while (jest.getTimerCount() === 0 && Date.now() < deadline) await new Promise(setImmediate);
        expect(jest.getTimerCount()).toBeGreaterThan(0);
        await balancer.close();
        expect(jest.getTimerCount()).toBe(0);
      } finally {
        jest.useRealTimers();
      }
    }
  });
});
