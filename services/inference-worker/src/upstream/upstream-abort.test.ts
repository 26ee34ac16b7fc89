import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openUpstream, readSseEvents } from './http.js';
import { createUpstreamAgent } from './upstream-agent.js';

/*
 * A job aborted while the worker is not reading (it is publishing the previous chunk) must close
 * the node's connection at once, or the node generates to the end (the fault suite: after an
 * edge restart, up to 15 of 16 model calls of clients that left mid-stream ran to the end when
 * the worker used fetch).
 */

let server: http.Server;
let baseUrl: string;
const closed: number[] = [];
const upstreamAgent = createUpstreamAgent({ jobsInFlightMax: 2 });

beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    // An endless stream, faster than the test reads it: data is always queued unread.
    const timer = setInterval(() => res.write('data: {"choices":[]}\n\n'), 2);
    req.socket.on('close', () => {
      clearInterval(timer);
      closed.push(Date.now());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await upstreamAgent.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function nodeClosedWithin(ms: number, count: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (closed.length < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return closed.length >= count;
}

describe('an aborted attempt closes the node connection', () => {
  it('while the worker is not reading (between two chunks)', async () => {
    const job = new AbortController();
    const upstream = await openUpstream({
      url: baseUrl,
      peer: 'node',
      dispatcher: upstreamAgent,
      signal: job.signal,
      firstByteTimeoutMs: 5_000,
    });
    const events = readSseEvents(upstream, 5_000);
    expect((await events.next()).done).toBe(false);
    // Busy elsewhere: unread data piles up, then the client leaves.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = closed.length;
    job.abort(new Error('client disconnected'));
    expect(await nodeClosedWithin(1_000, before + 1)).toBe(true);
    await expect(events.next()).rejects.toMatchObject({ failure: 'aborted' });
  });

  it('while a read is pending', async () => {
    const job = new AbortController();
    const upstream = await openUpstream({
      url: baseUrl,
      peer: 'node',
      dispatcher: upstreamAgent,
      signal: job.signal,
      firstByteTimeoutMs: 5_000,
    });
    const before = closed.length;
    const reading = (async () => {
      for await (const event of readSseEvents(upstream, 5_000)) void event;
    })();
    setTimeout(() => job.abort(new Error('client disconnected')), 20);
    await expect(reading).rejects.toMatchObject({ failure: 'aborted' });
    expect(await nodeClosedWithin(1_000, before + 1)).toBe(true);
  });
});
