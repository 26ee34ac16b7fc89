/*
 * The worker's model nodes: which node takes an attempt (fewest in flight per weight, healthy
 * first), failover between nodes, their health (probes and request outcomes) and the reports
 * of that health to billing.
 */
import {
  GatewayError,
  NODE_HEALTH_BATCH_MAX,
  publicNodeUrl,
  type NodeHealthErrorKind,
  type NodeHealthReport,
} from '@gateway/contracts';
import { request, type Dispatcher } from 'undici';
import { UpstreamError, type UpstreamFailure } from './errors.js';

/** What the worker knows of one model node (shared by every model it serves). */
export interface NodeState {
  url: string;
  /** From the last health check or request outcome; unhealthy nodes are tried last. */
  healthy: boolean;
  /** Requests in flight from this worker. */
  outstanding: number;
  /** When `healthy` was last observed (probe or request); 0 before any observation. */
  observedAtMs: number;
  /** Why the last failed observation failed (never a message: it could quote a prompt). */
  lastErrorKind?: NodeHealthErrorKind;
}

export interface NodeRef {
  url: string;
  /** 1 when omitted (the catalog's default). */
  weight?: number;
}

export interface NodeRegistry {
  state(url: string): NodeState;
  /** Picks the healthy node with the fewest outstanding requests per unit of weight. */
  pick(nodes: readonly NodeRef[], excluded: ReadonlySet<string>): NodeState | undefined;
  startHealthChecks(intervalMs: number): void;
  /** The nodes this worker currently knows (used in the last 10 minutes). */
  known(): readonly NodeState[];
  stop(): void;
}

/** Records an observation of a node (probe or request outcome). */
export function observe(node: NodeState, healthy: boolean, errorKind?: NodeHealthErrorKind): void {
  node.healthy = healthy;
  node.observedAtMs = Date.now();
  if (healthy) delete node.lastErrorKind;
  else if (errorKind) node.lastErrorKind = errorKind;
}

const ERROR_KINDS: Record<UpstreamFailure, NodeHealthErrorKind> = {
  connect: 'unreachable',
  timeout: 'timeout',
  server_error: 'http_error',
  rate_limited: 'rate_limited',
  bad_response: 'bad_response',
  rejected: 'http_error',
  aborted: 'timeout',
};

const HEALTH_TIMEOUT_MS = 2_000;
/** Nodes not used for this long are forgotten (and no longer probed). */
const FORGET_AFTER_MS = 10 * 60_000;

export interface NodeRegistryOptions {
  /** The worker's upstream agent: probes share the jobs' connections to each node. */
  dispatcher: Dispatcher;
  probePath?: string;
}

export function createNodeRegistry({
  dispatcher,
  probePath = '/health',
}: NodeRegistryOptions): NodeRegistry {
  const nodes = new Map<string, NodeState & { lastUsedMs: number }>();
  let timer: NodeJS.Timeout | undefined;

  const state = (url: string) => {
    let node = nodes.get(url);
    if (!node) {
      node = { url, healthy: true, outstanding: 0, observedAtMs: 0, lastUsedMs: Date.now() };
      nodes.set(url, node);
    }
    node.lastUsedMs = Date.now();
    return node;
  };

  async function probe(node: NodeState) {
    const signal = AbortSignal.timeout(HEALTH_TIMEOUT_MS);
    try {
      const response = await request(node.url.replace(/\/+$/, '') + probePath, {
        dispatcher,
        signal,
      });
      // Read and dropped (undici stops reading a long one): the status is the answer.
      await response.body.dump();
      observe(node, response.statusCode >= 200 && response.statusCode < 300, 'http_error');
    } catch {
      observe(node, false, signal.aborted ? 'timeout' : 'unreachable');
    }
  }

  return {
    state,
    pick(refs, excluded) {
      let best: { node: NodeState; score: number } | undefined;
      for (const ref of refs) {
        if (excluded.has(ref.url)) continue;
        const node = state(ref.url);
        // Unhealthy nodes rank after every healthy one, but stay eligible: health is a hint.
        const weight = ref.weight !== undefined && ref.weight > 0 ? ref.weight : 1;
        const score = (node.healthy ? 0 : 1e9) + (node.outstanding + 1) / weight;
        if (!best || score < best.score) best = { node, score };
      }
      return best?.node;
    },
    startHealthChecks(intervalMs) {
      if (timer || intervalMs <= 0) return;
      timer = setInterval(() => {
        const now = Date.now();
        for (const [url, node] of nodes) {
          if (now - node.lastUsedMs > FORGET_AFTER_MS && node.outstanding === 0) nodes.delete(url);
          else void probe(node);
        }
      }, intervalMs);
      timer.unref();
    },
    known: () => [...nodes.values()],
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/**
 * Reports what this worker observes of its model nodes to billing, for the operators'
 * catalog. Bounded: at most one report per tick (`intervalMs`), sent only when a node changed
 * (up/down, error kind) or when `refreshMs` passed since the last one (so billing's "stale after
 * 2 min" never hides a live node); at most NODE_HEALTH_BATCH_MAX nodes per call. URLs are
 * stripped of userinfo, query and fragment; no message, prompt or secret is sent.
 */
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

export interface FailoverOptions<T> {
  registry: NodeRegistry;
  nodes: readonly NodeRef[];
  maxAttempts: number;
  /** One attempt on one node. `relayed()` tells whether output already left the worker. */
  attempt(node: NodeState): Promise<T>;
  relayed(): boolean;
  onAttemptFailed?(node: NodeState, error: UpstreamError): void;
}

/**
 * Runs `attempt` on the best node, moving on to another node after a connect error, timeout,
 * 5xx, 429 or garbage — but only while nothing was relayed to the client: a half-sent answer
 * cannot be restarted elsewhere. When every attempt failed: all 429 → `rate_limit_exceeded`
 * ("model at capacity"), otherwise `GATEWAY_TIMEOUT`.
 */
export async function withFailover<T>(options: FailoverOptions<T>): Promise<T> {
  if (options.nodes.length === 0) {
    throw new GatewayError('GATEWAY_TIMEOUT', 'The model has no node configured.');
  }
  const tried = new Set<string>();
  const failures: UpstreamError[] = [];
  while (failures.length < options.maxAttempts) {
    const node = options.registry.pick(options.nodes, tried);
    if (!node) break;
    tried.add(node.url);
    node.outstanding += 1;
    try {
      const result = await options.attempt(node);
      observe(node, true);
      return result;
    } catch (error) {
      if (!(error instanceof UpstreamError) || !error.retryable || options.relayed()) throw error;
      if (error.failure !== 'rate_limited') observe(node, false, ERROR_KINDS[error.failure]);
      options.onAttemptFailed?.(node, error);
      failures.push(error);
    } finally {
      node.outstanding -= 1;
    }
  }
  throw exhausted(failures);
}

function exhausted(failures: UpstreamError[]): GatewayError {
  if (failures.length > 0 && failures.every((f) => f.failure === 'rate_limited')) {
    const retryAfterS = Math.max(1, ...failures.map((f) => f.detail.retryAfterS ?? 1));
    return new GatewayError('rate_limit_exceeded', 'The model is at capacity; retry shortly.', {
      details: { retryAfterS },
    });
  }
  return new GatewayError('GATEWAY_TIMEOUT', 'No model node answered in time; retry shortly.');
}
