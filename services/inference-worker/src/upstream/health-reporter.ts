/**
 * Reports what this worker observes of its model nodes to billing (issue 16), for the operators'
 * catalog. Bounded: at most one report per tick (`intervalMs`), sent only when a node changed
 * (up/down, error kind) or when `refreshMs` passed since the last one (so billing's "stale after
 * 2 min" never hides a live node); at most NODE_HEALTH_BATCH_MAX nodes per call. URLs are
 * stripped of userinfo, query and fragment; no message, prompt or secret is sent.
 */
import { NODE_HEALTH_BATCH_MAX, publicNodeUrl, type NodeHealthReport } from '@gateway/contracts';
import type { NodeRegistry, NodeState } from './node-pool.js';

export interface HealthReporterOptions {
  registry: Pick<NodeRegistry, 'known'>;
  report(report: NodeHealthReport): Promise<void>;
  workerId: string;
  intervalMs: number;
  refreshMs: number;
  onError?(error: unknown): void;
}

export function startHealthReporter(options: HealthReporterOptions): { stop(): void } {
  const sent = new Map<string, string>();
  let lastFullMs = 0;
  let busy = false;

  async function tick() {
    const observed = options.registry.known().filter((node) => node.observedAtMs > 0);
    const due = Date.now() - lastFullMs >= options.refreshMs;
    const changed = observed.filter((node) => sent.get(node.url) !== signature(node));
    const nodes = (due ? observed : changed).slice(0, NODE_HEALTH_BATCH_MAX);
    if (nodes.length === 0) return;
    await options.report({ workerId: options.workerId, nodes: nodes.map(toWire) });
    for (const node of nodes) sent.set(node.url, signature(node));
    if (due) lastFullMs = Date.now();
  }

  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    tick()
      .catch((error: unknown) => options.onError?.(error))
      .finally(() => (busy = false));
  }, options.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

const signature = (node: NodeState) => `${node.healthy}:${node.lastErrorKind ?? ''}`;

function toWire(node: NodeState): NodeHealthReport['nodes'][number] {
  return {
    url: publicNodeUrl(node.url),
    healthy: node.healthy,
    observedAtMs: node.observedAtMs,
    ...(node.lastErrorKind ? { lastErrorKind: node.lastErrorKind } : {}),
  };
}
