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
