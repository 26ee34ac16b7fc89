/**
 * Node health (issue 16): workers report what they observed of each model node (batched, at a
 * bounded rate); operators read it beside the catalog. Keyed by node URL, last report wins; a
 * report older than `staleAfterMs` reads as `unknown`. Plain `pg` over billing's pool.
 */
import type pg from 'pg';
import {
  publicNodeUrl,
  type NodeHealthReport,
  type NodeHealthView,
  type NodeHealthErrorKind,
} from '@gateway/contracts';

/** A report older than this is no longer trusted: the node shows as `unknown`. */
export const NODE_HEALTH_STALE_AFTER_MS = 2 * 60_000;
/** Rows not refreshed for a day are deleted, as are rows of nodes no longer in the catalog. */
export const NODE_HEALTH_FORGET_AFTER_MS = 24 * 60 * 60_000;

interface Row {
  url: string;
  healthy: boolean;
  last_error_kind: NodeHealthErrorKind | null;
  observed_at: Date;
  worker_id: string;
}

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
  return {
    async record({ workerId, nodes }) {
      // An observation from the future (clock skew) is clamped to now.
      const nowMs = clock().getTime();
      await pool.query(
        `INSERT INTO node_health (url, healthy, last_error_kind, observed_at, worker_id)
         SELECT * FROM unnest($1::text[], $2::boolean[], $3::text[], $4::timestamptz[], $5::text[])
         ON CONFLICT (url) DO UPDATE SET healthy = EXCLUDED.healthy,
           last_error_kind = EXCLUDED.last_error_kind, observed_at = EXCLUDED.observed_at,
           worker_id = EXCLUDED.worker_id
         WHERE node_health.observed_at <= EXCLUDED.observed_at`,
        [
          nodes.map((n) => n.url),
          nodes.map((n) => n.healthy),
          nodes.map((n) => n.lastErrorKind ?? null),
          nodes.map((n) => new Date(Math.min(n.observedAtMs, nowMs))),
          nodes.map(() => workerId),
        ],
      );
    },
    async list() {
      const [models, { rows }] = await Promise.all([
        catalog.list(),
        pool.query<Row>('SELECT * FROM node_health'),
      ]);
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
      const { rowCount } = await pool.query(
        'DELETE FROM node_health WHERE observed_at < $1 OR NOT (url = ANY($2::text[]))',
        [cutoff, urls],
      );
      return rowCount ?? 0;
    },
  };
}

function view(model: string, url: string, row: Row | undefined, nowMs: number): NodeHealthView {
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
