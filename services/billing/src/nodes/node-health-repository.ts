/**
 * Node health's repository: every statement on `node_health` (plain `pg` over billing's pool).
 * Keyed by node URL; the newest observation wins.
 */
import type pg from 'pg';
import type { NodeHealthErrorKind } from '@gateway/contracts';

export interface NodeHealthRow {
  url: string;
  healthy: boolean;
  last_error_kind: NodeHealthErrorKind | null;
  observed_at: Date;
  worker_id: string;
}

export interface NodeObservation {
  url: string;
  healthy: boolean;
  lastErrorKind: NodeHealthErrorKind | null;
  observedAt: Date;
}

export interface NodeHealthRepository {
  /** One statement for the batch; a row is replaced only by an observation at least as new. */
  upsert(workerId: string, observations: readonly NodeObservation[]): Promise<void>;
  list(): Promise<NodeHealthRow[]>;
  /** Deletes rows observed before `before` or whose URL is not in `keepUrls`; how many. */
  deleteStaleOrUnlisted(before: Date, keepUrls: readonly string[]): Promise<number>;
}

export function nodeHealthRepository(pool: pg.Pool): NodeHealthRepository {
  return {
    async upsert(workerId, observations) {
      await pool.query(
        `INSERT INTO node_health (url, healthy, last_error_kind, observed_at, worker_id)
         SELECT * FROM unnest($1::text[], $2::boolean[], $3::text[], $4::timestamptz[], $5::text[])
         ON CONFLICT (url) DO UPDATE SET healthy = EXCLUDED.healthy,
           last_error_kind = EXCLUDED.last_error_kind, observed_at = EXCLUDED.observed_at,
           worker_id = EXCLUDED.worker_id
         WHERE node_health.observed_at <= EXCLUDED.observed_at`,
        [
          observations.map((n) => n.url),
          observations.map((n) => n.healthy),
          observations.map((n) => n.lastErrorKind),
          observations.map((n) => n.observedAt),
          observations.map(() => workerId),
        ],
      );
    },
    async list() {
      return (await pool.query<NodeHealthRow>('SELECT * FROM node_health')).rows;
    },
    async deleteStaleOrUnlisted(before, keepUrls) {
      const { rowCount } = await pool.query(
        'DELETE FROM node_health WHERE observed_at < $1 OR NOT (url = ANY($2::text[]))',
        [before, [...keepUrls]],
      );
      return rowCount ?? 0;
    },
  };
}
