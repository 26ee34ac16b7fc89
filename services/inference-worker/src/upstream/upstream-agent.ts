/*
 * The worker's connections to model nodes and the external provider: one undici Agent, made in
 * the composition root and given to every upstream call and health probe.
 *
 * Why not the global dispatcher: the `undici` package's `request` and Node's own `fetch` (a
 * bundled undici of another major version) share one global slot, and whichever first touched
 * it served both, so the worker's job calls ran through whatever Agent the first health probe
 * had made, with its defaults. An explicit Agent keeps one undici on the path and its limits
 * stated here.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { Agent } from 'undici';

export interface UpstreamAgentOptions {
  /**
   * Jobs the worker runs at once (direct jobs plus both queues' prefetch): one attempt holds one
   * connection, so a job never waits behind another for a socket to the same node.
   */
  jobsInFlightMax: number;
}

/** Idle keep-alive connections are closed after this long (nodes usually keep them longer). */
const KEEP_ALIVE_TIMEOUT_MS = 4_000;

export function createUpstreamAgent(options: UpstreamAgentOptions): Agent {
  return new Agent({
    // One more than the jobs in flight: the node's health probe.
    connections: options.jobsInFlightMax + 1,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // The attempt's own timers bound the wait for headers (first byte) and between chunks
    // (idle), as configured (up to 600 s); undici's 300 s defaults would cut a longer one first.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
}

/** How often shutdown looks whether the last upstream calls have ended. */
const CLOSE_POLL_MS = 20;

/** Calls in flight or waiting for a connection, over every origin. */
const openCalls = (agent: Agent): number =>
  Object.values(agent.stats).reduce((sum, origin) => sum + origin.running + origin.pending, 0);

/**
 * At shutdown, after the consumers and the HTTP server: the calls still open belong to jobs
 * both drains gave up on, and may last minutes (a long stream), far past the shutdown's budget.
 * They get `graceMs` to end, then every connection is cut (each such job fails and voids its
 * hold through the billing client, which closes after this), so the later steps still run.
 * Not `close()` then `destroy()`: undici's `close` forgets the Agent's pools, after which
 * `destroy` no longer reaches the calls in flight.
 */
export async function closeUpstreamAgent(agent: Agent, graceMs: number): Promise<void> {
  const deadlineMs = Date.now() + graceMs;
  while (openCalls(agent) > 0 && Date.now() < deadlineMs) {
    await delay(CLOSE_POLL_MS, undefined, { ref: false });
  }
  await agent.destroy();
}
