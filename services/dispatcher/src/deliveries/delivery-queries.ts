import type pg from 'pg';
import type { WebhookDeliveryStatus } from '@gateway/contracts';
import type { WebhookFormat } from '../signing/signature-headers.js';

/** The statuses the internal API reports (packages/contracts/src/dispatcher-api.ts). */
export type DeliveryStatus = WebhookDeliveryStatus;

export interface AttemptView {
  attempt: number;
  at: Date;
  statusCode: number | null;
  latencyMs: number;
  outcome: string;
  error: string | null;
}

export interface DeliveryView {
  id: string;
  jobId: string;
  /** `inference.completed`, or an account alert's type (its event id is then `jobId`). */
  eventType: string;
  status: DeliveryStatus;
  format: WebhookFormat;
  createdAt: Date;
  nextAttemptAt: Date | null;
  payloadPurged: boolean;
  attempts: AttemptView[];
}

export type RedeliverResult =
  | { outcome: 'queued'; delivery: DeliveryView } // -> 202
  | { outcome: 'not_found' } // -> 404
  | { outcome: 'purged' } // -> 409
  | { outcome: 'in_progress' }; // -> 409

interface DeliveryRow {
  id: string;
  job_id: string;
  event_type: string;
  status: DeliveryStatus;
  format: WebhookFormat;
  created_at: Date;
  next_attempt_at: Date | null;
  payload_purged: boolean;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: Date;
  status_code: number | null;
  latency_ms: number;
  outcome: string;
  error: string | null;
}

const DELIVERY_COLUMNS = `id, job_id, event_type, status, format, created_at, next_attempt_at,
  (payload_ciphertext IS NULL) AS payload_purged`;

/** The operator side of the deliveries table: inspection and manual redelivery. */
export class DeliveryQueries {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * An account's deliveries, newest first, each with its attempt log; `afterId` is the last
   * delivery of the previous page (null for the first page, undefined when it is unknown).
   * Comparing against the stored row keeps the microseconds a JavaScript Date would drop.
   */
  async listForAccount(
    accountId: string,
    limit: number,
    afterId: string | null,
  ): Promise<DeliveryView[] | undefined> {
    const result = await this.pool.query<DeliveryRow>(
      `WITH cursor AS (
         SELECT created_at, id FROM webhook_deliveries WHERE id = $2 AND account_id = $1)
       SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
        WHERE account_id = $1
          AND ($2::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM cursor))
        ORDER BY created_at DESC, id DESC
        LIMIT $3`,
      [accountId, afterId, limit],
    );
    if (afterId !== null && result.rows.length === 0 && !(await this.exists(accountId, afterId))) {
      return undefined;
    }
    return this.withAttempts(result.rows);
  }

  /** Whether the delivery is the account's (an unknown page cursor is not found). */
  private async exists(accountId: string, id: string): Promise<boolean> {
    const result = await this.pool.query(
      'SELECT 1 FROM webhook_deliveries WHERE id = $1 AND account_id = $2',
      [id, accountId],
    );
    return result.rowCount === 1;
  }

  /**
   * Queues a finished delivery again, due at once, with a fresh retry budget and the same
   * delivery id (receivers deduplicate on it). Only within the retention: a purged result
   * cannot be sent; a delivery that still has attempts scheduled is left alone. With
   * `accountId` (the dashboard's owner route), another account's delivery is not found.
   */
  async redeliver(id: string, accountId?: string): Promise<RedeliverResult> {
    const updated = await this.pool.query<DeliveryRow>(
      `UPDATE webhook_deliveries
          SET status = 'queued', next_attempt_at = clock_timestamp(), round_attempt_count = 0,
              updated_at = clock_timestamp()
        WHERE id = $1 AND ($2::text IS NULL OR account_id = $2)
          AND status IN ('delivered', 'failed', 'dropped')
          AND payload_ciphertext IS NOT NULL AND purge_at > clock_timestamp()
        RETURNING ${DELIVERY_COLUMNS}`,
      [id, accountId ?? null],
    );
    if (updated.rows[0]) {
      const [delivery] = await this.withAttempts(updated.rows);
      return { outcome: 'queued', delivery: delivery! };
    }
    const found = await this.pool.query<{ status: DeliveryStatus; purgeable: boolean }>(
      `SELECT status, (payload_ciphertext IS NULL OR purge_at <= clock_timestamp()) AS purgeable
         FROM webhook_deliveries WHERE id = $1 AND ($2::text IS NULL OR account_id = $2)`,
      [id, accountId ?? null],
    );
    const row = found.rows[0];
    if (!row) return { outcome: 'not_found' };
    return row.purgeable ? { outcome: 'purged' } : { outcome: 'in_progress' };
  }

  private async withAttempts(rows: DeliveryRow[]): Promise<DeliveryView[]> {
    if (rows.length === 0) return [];
    const attempts = await this.pool.query<AttemptRow>(
      `SELECT delivery_id, attempt, started_at, status_code, latency_ms, outcome, error
         FROM webhook_attempts WHERE delivery_id = ANY($1::text[])
        ORDER BY delivery_id, attempt`,
      [rows.map((row) => row.id)],
    );
    const byDelivery = new Map<string, AttemptView[]>();
    for (const a of attempts.rows) {
      const list = byDelivery.get(a.delivery_id) ?? [];
      list.push({
        attempt: a.attempt,
        at: a.started_at,
        statusCode: a.status_code,
        latencyMs: a.latency_ms,
        outcome: a.outcome,
        error: a.error,
      });
      byDelivery.set(a.delivery_id, list);
    }
    return rows.map((row) => ({
      id: row.id,
      jobId: row.job_id,
      eventType: row.event_type,
      status: row.status,
      format: row.format,
      createdAt: row.created_at,
      nextAttemptAt: row.next_attempt_at,
      payloadPurged: row.payload_purged,
      attempts: byDelivery.get(row.id) ?? [],
    }));
  }
}
