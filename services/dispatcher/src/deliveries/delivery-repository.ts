import type pg from 'pg';
import type { SealedValue } from '@gateway/crypto';
import {
  activeSecretsJsonSql,
  secretRowFromJson,
  type SecretJson,
  type SecretRow,
} from '../secrets/secret-repository.js';
import type { WebhookFormat } from '../signing/signature-headers.js';
import type { Verdict } from './schedule.js';

export interface NewDelivery {
  id: string;
  /** The job's id, or an account alert's event id (one delivery each). */
  jobId: string;
  /** `inference.completed` (the default) or the alert's type. */
  eventType?: string;
  accountId: string;
  format: WebhookFormat;
  sealed: SealedValue;
  retentionMs: number;
  firstDelayMs: number;
  /** The queuing request's W3C `traceparent`, when tracing is on. */
  traceParent: string | null;
}

/** A delivery this dispatcher holds the lease of; only the lease holder may record. */
export interface ClaimedDelivery {
  id: string;
  /**
   * `webhook-id`: the delivery id for a job's result; an alert's event id, the same for every
   * delivery of that alert, so a receiver deduplicates on it.
   */
  webhookId: string;
  accountId: string;
  format: WebhookFormat;
  /** Null once the payload was purged. */
  sealed: SealedValue | null;
  roundAttemptCount: number;
  leaseId: string;
  traceParent: string | null;
  /**
   * The account's active signing secrets (sealed) when the delivery was claimed, oldest first,
   * read by the claim's own statement; empty when the account has none yet.
   */
  secrets: SecretRow[];
}

export interface AttemptRecord {
  startedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  verdict: Verdict;
}

/** The event type of a job's result (every delivery before account alerts). */
export const COMPLETION_EVENT = 'inference.completed';

const STATUS_AFTER = {
  delivered: 'delivered',
  retry: 'retrying',
  failed: 'failed',
  dropped: 'dropped',
} as const;

interface ClaimRow {
  id: string;
  job_id: string;
  event_type: string;
  account_id: string;
  format: WebhookFormat;
  payload_ciphertext: Buffer | null;
  payload_nonce: Buffer | null;
  payload_tag: Buffer | null;
  payload_key_version: number;
  round_attempt_count: number;
  lease_id: string;
  trace_parent: string | null;
  secrets: SecretJson[];
}

const toClaimed = (row: ClaimRow): ClaimedDelivery => ({
  id: row.id,
  webhookId: row.event_type === COMPLETION_EVENT ? row.id : row.job_id,
  accountId: row.account_id,
  format: row.format,
  sealed:
    row.payload_ciphertext && row.payload_nonce && row.payload_tag
      ? {
          ciphertext: row.payload_ciphertext,
          nonce: row.payload_nonce,
          tag: row.payload_tag,
          keyVersion: row.payload_key_version,
        }
      : null,
  roundAttemptCount: row.round_attempt_count,
  leaseId: row.lease_id,
  traceParent: row.trace_parent,
  secrets: row.secrets.map(secretRowFromJson),
});

/** A due delivery, not leased: its lease lapsed or it never had one. */
const DUE = `next_attempt_at <= now() AND (leased_until IS NULL OR leased_until <= now())`;

/** The claim's rows (`due`, $1 at most), in the order they fell due. */
const DUE_IN_ORDER = `due AS (
  SELECT id FROM webhook_deliveries WHERE ${DUE}
   ORDER BY next_attempt_at LIMIT $1
   FOR UPDATE SKIP LOCKED)`;

/**
 * The same, the accounts in $4 last: first the others' due rows, then theirs into what is left.
 * Each part is read in due order through the due index; the first passes over the crowded
 * accounts' due rows (a scan as long as their backlog, only while some account is crowded).
 */
const DUE_CROWDED_LAST = `others AS (
  SELECT id FROM webhook_deliveries WHERE ${DUE} AND account_id <> ALL ($4::text[])
   ORDER BY next_attempt_at LIMIT $1
   FOR UPDATE SKIP LOCKED
), crowded AS (
  SELECT id FROM webhook_deliveries WHERE ${DUE} AND account_id = ANY ($4::text[])
   ORDER BY next_attempt_at LIMIT greatest($1 - (SELECT count(*) FROM others), 0)
   FOR UPDATE SKIP LOCKED
), due AS (SELECT id FROM others UNION ALL SELECT id FROM crowded)`;

/** The dispatch side of the deliveries table: intake, claims, attempt results, purge. */
export class DeliveryRepository {
  /**
   * @param secretsPerClaim the signing secrets a claim returns per delivery at most (the active
   *   ones: `MAX_ACTIVE_SECRETS`, decided in signing-secrets.ts).
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly secretsPerClaim: number,
  ) {}

  /** False when the job already has a delivery (a redelivered completion event). */
  async insert(delivery: NewDelivery): Promise<boolean> {
    const [created] = await this.insertMany([delivery]);
    return created === true;
  }

  /**
   * Several deliveries in one statement (the intake's batch), each answered as `insert` would:
   * false for a job that already has a delivery, in this batch or before it. A statement is
   * atomic: if it fails, none of them is stored.
   */
  async insertMany(deliveries: readonly NewDelivery[]): Promise<boolean[]> {
    const result = await this.pool.query<{ id: string }>(
      `INSERT INTO webhook_deliveries
         (id, job_id, account_id, format, status, payload_ciphertext, payload_nonce, payload_tag,
          payload_key_version, purge_at, next_attempt_at, trace_parent, event_type)
       SELECT d.id, d.job_id, d.account_id, d.format, 'queued', d.ciphertext, d.nonce, d.tag,
              d.key_version, clock_timestamp() + d.retention_ms * interval '1 millisecond',
              clock_timestamp() + d.first_delay_ms * interval '1 millisecond', d.trace_parent,
              d.event_type
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::bytea[],
                     $7::bytea[], $8::integer[], $9::bigint[], $10::bigint[], $11::text[],
                     $12::text[])
              WITH ORDINALITY AS d(id, job_id, account_id, format, ciphertext, nonce, tag,
                                   key_version, retention_ms, first_delay_ms, trace_parent,
                                   event_type, position)
        ORDER BY d.position
       ON CONFLICT (job_id) DO NOTHING
       RETURNING id`,
      [
        deliveries.map((d) => d.id),
        deliveries.map((d) => d.jobId),
        deliveries.map((d) => d.accountId),
        deliveries.map((d) => d.format),
        deliveries.map((d) => d.sealed.ciphertext),
        deliveries.map((d) => d.sealed.nonce),
        deliveries.map((d) => d.sealed.tag),
        deliveries.map((d) => d.sealed.keyVersion),
        deliveries.map((d) => d.retentionMs),
        deliveries.map((d) => d.firstDelayMs),
        deliveries.map((d) => d.traceParent),
        deliveries.map((d) => d.eventType ?? COMPLETION_EVENT),
      ],
    );
    const created = new Set(result.rows.map((row) => row.id));
    return deliveries.map((delivery) => created.has(delivery.id));
  }

  /**
   * Leases up to `limit` due deliveries, in the order they fell due, except that those of the
   * `crowded` accounts (which already hold their share of this dispatcher's slots) come after
   * every other account's: they still take whatever the others leave. SKIP LOCKED lets replicas
   * claim side by side without waiting or taking the same row, and the lease keeps a claimed row
   * from being due again while its attempt runs; a dispatcher that dies mid-attempt loses the
   * lease when it lapses. Each claim carries its account's active secrets, so an attempt signs
   * without another read.
   */
  async claimDue(
    limit: number,
    leaseMs: number,
    crowded: readonly string[] = [],
  ): Promise<ClaimedDelivery[]> {
    const due = crowded.length === 0 ? DUE_IN_ORDER : DUE_CROWDED_LAST;
    const result = await this.pool.query<ClaimRow>(
      `WITH ${due}
       UPDATE webhook_deliveries AS d
          SET lease_id = gen_random_uuid(),
              leased_until = clock_timestamp() + $2 * interval '1 millisecond'
         FROM due
        WHERE d.id = due.id
       RETURNING d.id, d.job_id, d.event_type, d.account_id, d.format, d.payload_ciphertext, d.payload_nonce,
                 d.payload_tag, d.payload_key_version, d.round_attempt_count, d.lease_id,
                 d.trace_parent, ${activeSecretsJsonSql('d.account_id', '$3')} AS secrets`,
      crowded.length === 0
        ? [limit, leaseMs, this.secretsPerClaim]
        : [limit, leaseMs, this.secretsPerClaim, crowded],
    );
    return result.rows.map(toClaimed);
  }

  /**
   * Stores an attempt's outcome and the delivery's next state together, in one statement (one
   * round trip; a statement is atomic, so no explicit transaction). False when the lease was
   * lost (it lapsed and another dispatcher took over): then nothing is written.
   */
  async recordAttempt(claim: ClaimedDelivery, attempt: AttemptRecord): Promise<boolean> {
    const [recorded] = await this.recordAttempts([{ claim, attempt }]);
    return recorded === true;
  }

  /**
   * Several attempts' outcomes in one statement (attempts ending together), each answered as
   * `recordAttempt` would. A statement is atomic: if it fails, none of them is recorded.
   */
  async recordAttempts(
    records: readonly { claim: ClaimedDelivery; attempt: AttemptRecord }[],
  ): Promise<boolean[]> {
    const verdicts = records.map((record) => record.attempt.verdict);
    // Answered by delivery and lease: a batch may hold an attempt whose lease lapsed and the
    // current one of the same delivery; only the lease holder's is written.
    const result = await this.pool.query<{ id: string; lease_id: string }>(
      `WITH r AS (
         SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::bigint[],
                              $5::timestamptz[], $6::integer[], $7::integer[], $8::text[],
                              $9::text[])
                AS r(id, lease_id, status, delay_ms, started_at, status_code, latency_ms,
                     outcome, error)
       ), updated AS (
         UPDATE webhook_deliveries AS d
            SET status = r.status,
                next_attempt_at = clock_timestamp() + r.delay_ms * interval '1 millisecond',
                lease_id = NULL, leased_until = NULL,
                attempt_count = d.attempt_count + 1,
                round_attempt_count = d.round_attempt_count + 1,
                updated_at = clock_timestamp()
           FROM r
          WHERE d.id = r.id AND d.lease_id = r.lease_id
          RETURNING d.id, d.attempt_count, r.lease_id, r.started_at, r.status_code,
                    r.latency_ms, r.outcome, r.error
       ), attempts AS (
         INSERT INTO webhook_attempts
           (delivery_id, attempt, started_at, status_code, latency_ms, outcome, error)
         SELECT u.id, u.attempt_count, u.started_at, u.status_code, u.latency_ms, u.outcome,
                u.error
           FROM updated AS u)
       SELECT id, lease_id::text FROM updated`,
      [
        records.map((record) => record.claim.id),
        records.map((record) => record.claim.leaseId),
        verdicts.map((verdict) => STATUS_AFTER[verdict.outcome]),
        verdicts.map((verdict) => (verdict.outcome === 'retry' ? verdict.delayMs : null)),
        records.map((record) => record.attempt.startedAt),
        records.map((record) => record.attempt.statusCode),
        records.map((record) => record.attempt.latencyMs),
        verdicts.map((verdict) => verdict.outcome),
        verdicts.map((verdict) => (verdict.outcome === 'delivered' ? null : verdict.error)),
      ],
    );
    const recorded = new Set(result.rows.map((row) => `${row.id} ${row.lease_id}`));
    return records.map((record) => recorded.has(`${record.claim.id} ${record.claim.leaseId}`));
  }

  /** A claimed delivery whose payload is gone cannot be sent any more. */
  async markDropped(claim: ClaimedDelivery): Promise<void> {
    await this.pool.query(
      `UPDATE webhook_deliveries
          SET status = 'dropped', next_attempt_at = NULL, lease_id = NULL, leased_until = NULL,
              updated_at = clock_timestamp()
        WHERE id = $1 AND lease_id = $2`,
      [claim.id, claim.leaseId],
    );
  }

  /**
   * Deletes results past their retention, at most `limit` per call; the delivery row and its
   * attempt log stay. A delivery still waiting for an attempt is dropped with its payload.
   * Rows another statement holds (a batch of attempt records) are left to the next tick, so the
   * two multi-row updates never wait on each other in a cycle.
   */
  async purgeExpired(limit: number): Promise<number> {
    const result = await this.pool.query(
      `UPDATE webhook_deliveries
          SET payload_ciphertext = NULL, payload_nonce = NULL, payload_tag = NULL,
              payload_purged_at = clock_timestamp(),
              status = CASE WHEN status IN ('queued', 'retrying') THEN 'dropped' ELSE status END,
              next_attempt_at = NULL,
              updated_at = clock_timestamp()
        WHERE id IN (SELECT id FROM webhook_deliveries
                      WHERE purge_at <= now() AND payload_ciphertext IS NOT NULL
                      LIMIT $1
                      FOR UPDATE SKIP LOCKED)`,
      [limit],
    );
    return result.rowCount ?? 0;
  }

  async dueCount(): Promise<number> {
    const result = await this.pool.query<{ count: string }>(
      `SELECT count(*) AS count FROM webhook_deliveries WHERE next_attempt_at <= now()`,
    );
    return Number(result.rows[0]?.count ?? 0);
  }
}
