/**
 * Node health: workers report what they observed of each model node (batched, at a
 * bounded rate); operators read it beside the catalog. Keyed by node URL, last report wins; a
 * report older than `staleAfterMs` reads as `unknown`. Its statements: node-health-repository.ts.
 */
import type pg from 'pg';
import { publicNodeUrl, type NodeHealthReport, type NodeHealthView } from '@gateway/contracts';
import { nodeHealthRepository, type NodeHealthRow } from './node-health-repository.js';

/** A report older than this is no longer trusted: the node shows as `unknown`. */
export const NODE_HEALTH_STALE_AFTER_MS = 2 * 60_000;
/** Rows not refreshed for a day are deleted, as are rows of nodes no longer in the catalog. */
export const NODE_HEALTH_FORGET_AFTER_MS = 24 * 60 * 60_000;

export interface CatalogNodes {
  list(): Promise<readonly { id: string; nodes: readonly { url: string }[] }[]>;
}

export interface NodeHealthService {
  record(report: NodeHealthReport): Promise<void>;
  list(): Promise<NodeHealthView[]>;
  prune(): Promise<number>;
}

export function createNodeHealthService(
  pool: pg.Pool,
  catalog: CatalogNodes,
  clock: () => Date = () => new Date(),
): NodeHealthService {
  const repository = nodeHealthRepository(pool);
  return {
    async record({ workerId, nodes }) {
      // An observation from the future (clock skew) is clamped to now.
      const nowMs = clock().getTime();
      await repository.upsert(
        workerId,
        nodes.map((n) => ({
          url: n.url,
          healthy: n.healthy,
          lastErrorKind: n.lastErrorKind ?? null,
          observedAt: new Date(Math.min(n.observedAtMs, nowMs)),
        })),
      );
    },
    async list() {
      const [models, rows] = await Promise.all([catalog.list(), repository.list()]);
      const byUrl = new Map(rows.map((row) => [row.url, row]));
      const nowMs = clock().getTime();
      return models.flatMap((model) =>
        model.nodes.map((node) =>
          view(model.id, node.url, byUrl.get(publicNodeUrl(node.url)), nowMs),
        ),
      );
    },
    async prune() {
      const models = await catalog.list();
      const urls = models.flatMap((model) => model.nodes.map((node) => publicNodeUrl(node.url)));
      const cutoff = new Date(clock().getTime() - NODE_HEALTH_FORGET_AFTER_MS);
      return repository.deleteStaleOrUnlisted(cutoff, urls);
    },
  };
}

function view(
  model: string,
  url: string,
  row: NodeHealthRow | undefined,
  nowMs: number,
): NodeHealthView {
  const publicUrl = publicNodeUrl(url);
  if (!row) {
    return {
      model,
      url: publicUrl,
      health: 'unknown',
      observedAt: null,
      lastErrorKind: null,
      workerId: null,
    };
  }
  const stale = nowMs - row.observed_at.getTime() > NODE_HEALTH_STALE_AFTER_MS;
  return {
    model,
    url: publicUrl,
    health: stale ? 'unknown' : row.healthy ? 'healthy' : 'down',
    observedAt: row.observed_at.toISOString(),
    lastErrorKind: row.last_error_kind,
    workerId: row.worker_id,
  };
}
