import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  getGlobalDispatcher,
  MockAgent,
  setGlobalDispatcher,
  type Agent,
  type Dispatcher,
} from 'undici';
import { openUpstream, readJson } from './http.js';
import { createNodeRegistry } from './node-pool.js';
import { closeUpstreamAgent, createUpstreamAgent } from './upstream-agent.js';

/** A loopback "node": answers `/health` at once and holds `/slow` until released. */
let server: http.Server;
let baseUrl: string;
const sockets = new Set<unknown>();
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/slow') return void held.push(res);
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ ok: true }));
  });
  server.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const agents: Dispatcher[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.destroy()));
});

function agentFor(jobsInFlightMax: number): Dispatcher {
  const agent = createUpstreamAgent({ jobsInFlightMax });
  agents.push(agent);
  return agent;
}

async function heldReach(count: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (held.length < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const get = (dispatcher: Dispatcher, path: string) =>
  openUpstream({
    url: `${baseUrl}${path}`,
    method: 'GET',
    peer: 'node',
    dispatcher,
    signal: new AbortController().signal,
    firstByteTimeoutMs: 5_000,
  });

describe("the worker's upstream agent", () => {
  it('carries job calls and health probes while the global dispatcher refuses everything', async () => {
    const refusing = new MockAgent();
    refusing.disableNetConnect();
    const previous = getGlobalDispatcher();
    setGlobalDispatcher(refusing);
    const agent = agentFor(1);
    const registry = createNodeRegistry({ dispatcher: agent });
    try {
      await expect(readJson(await get(agent, '/small'), 5_000, 1024)).resolves.toEqual({
        ok: true,
      });
      const node = registry.state(baseUrl);
      registry.startHealthChecks(20);
      const deadline = Date.now() + 5_000;
      while (node.observedAtMs === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(node).toMatchObject({ healthy: true });
      expect(node.observedAtMs).toBeGreaterThan(0);
      expect(node.lastErrorKind).toBeUndefined();
    } finally {
      registry.stop();
      setGlobalDispatcher(previous);
      await refusing.close();
    }
  });

  it("opens at most one connection per job in flight, plus one spare (the probe's)", async () => {
    const agent = agentFor(1);
    sockets.clear();
    const calls = [1, 2, 3].map(async () => readJson(await get(agent, '/slow'), 5_000, 1024));
    // Handled here too: a failed assertion below must not leave them to reject unheard.
    void Promise.allSettled(calls);
    await heldReach(2);
    // The third waits for a connection instead of opening one.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(held.length).toBe(2);
    expect(sockets.size).toBe(2);
    for (const res of held.splice(0)) res.end('{}');
    await heldReach(1);
    for (const res of held.splice(0)) res.end('{}');
    await expect(Promise.all(calls)).resolves.toEqual([{}, {}, {}]);
    expect(sockets.size).toBe(2);
  });

  it('closes at shutdown within its grace, cutting a call that would not end', async () => {
    const agent = agentFor(1);
    held.length = 0;
    const call = get(agent, '/slow').then(async (answer) => readJson(answer, 60_000, 1024));
    void call.catch(() => undefined);
    await heldReach(1);
    const startedMs = Date.now();
    await closeUpstreamAgent(agent as Agent, 200);
    expect(Date.now() - startedMs).toBeLessThan(2_000);
    const error = await call.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ failure: 'connect' });
    held.splice(0).forEach((res) => res.destroy());
  });
});
