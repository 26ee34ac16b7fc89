/**
 * Every statement of account alerts, plain `pg`: the settings rows (URL
 * sealed), the evaluation's claims and figures, the outbox's inserts, claims and marks.
 */
import type pg from 'pg';
import { inPoolTransaction } from '@gateway/runtime';
import type { SealedValue } from '@gateway/crypto';
import type { AlertData, AlertType } from '@gateway/contracts';

export interface SealedSettingsRow {
  account_id: string;
  url_ciphertext: Buffer;
  url_nonce: Buffer;
  url_tag: Buffer;
  url_key_version: number;
  enabled: boolean;
  balance_below_micro_dzd: string | null;
  budget_thresholds_percent: number[];
  exhaustion_hours: number | null;
  balance_low_episode: number;
  updated_at: Date;
}

export interface SettingsValues {
  sealedUrl: SealedValue;
  enabled: boolean;
  balanceBelowMicroDzd: bigint | null;
  budgetThresholdsPercent: number[];
  exhaustionHours: number | null;
}

export interface NewAlertEvent {
  id: string;
  accountId: string;
  type: AlertType;
  data: AlertData;
}

/** An event waiting for the broker, with its account's settings (absent: removed). */
export interface PendingEventRow extends Partial<SealedSettingsRow> {
  event_id: string;
  event_account_id: string;
  type: AlertType;
  data: AlertData;
  occurred_at: Date;
}

const COLUMNS = `account_id, url_ciphertext, url_nonce, url_tag, url_key_version,
  enabled, balance_below_micro_dzd, budget_thresholds_percent, exhaustion_hours,
  balance_low_episode, updated_at`;
const S_COLUMNS = COLUMNS.split(',')
  .map((column) => `s.${column.trim()}`)
  .join(', ');

export class AlertRepository {
  constructor(private readonly pool: pg.Pool) {}

  async find(accountId: string): Promise<SealedSettingsRow | null> {
    const { rows } = await this.pool.query<SealedSettingsRow>(
      `SELECT ${COLUMNS} FROM alert_settings WHERE account_id = $1`,
      [accountId],
    );
    return rows[0] ?? null;
  }

  /** Inserts or replaces the settings; the balance alert's episode is kept. */
  async put(accountId: string, values: SettingsValues): Promise<SealedSettingsRow> {
    const { sealedUrl: sealed } = values;
    const { rows } = await this.pool.query<SealedSettingsRow>(
      `INSERT INTO alert_settings AS s
         (account_id, url_ciphertext, url_nonce, url_tag, url_key_version, enabled,
          balance_below_micro_dzd, budget_thresholds_percent, exhaustion_hours)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::integer[], $9)
       ON CONFLICT (account_id) DO UPDATE
         SET url_ciphertext = EXCLUDED.url_ciphertext, url_nonce = EXCLUDED.url_nonce,
             url_tag = EXCLUDED.url_tag, url_key_version = EXCLUDED.url_key_version,
             enabled = EXCLUDED.enabled,
             balance_below_micro_dzd = EXCLUDED.balance_below_micro_dzd,
             budget_thresholds_percent = EXCLUDED.budget_thresholds_percent,
             exhaustion_hours = EXCLUDED.exhaustion_hours,
             updated_at = CURRENT_TIMESTAMP
       RETURNING ${COLUMNS}`,
      [
        accountId,
        sealed.ciphertext,
        sealed.nonce,
        sealed.tag,
        sealed.keyVersion,
        values.enabled,
        values.balanceBelowMicroDzd?.toString() ?? null,
        values.budgetThresholdsPercent,
        values.exhaustionHours,
      ],
    );
    return rows[0]!;
  }

  /** False when the account had no settings. */
  async remove(accountId: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM alert_settings WHERE account_id = $1', [
      accountId,
    ]);
    return result.rowCount === 1;
  }

  /**
   * Claims up to `limit` enabled accounts not evaluated since `notSince`, stamping `now`:
   * replicas skip each other's claims (SKIP LOCKED) and the stamp keeps them from repeating.
   */
  async claimDue(now: Date, notSince: Date, limit: number): Promise<SealedSettingsRow[]> {
    const { rows } = await this.pool.query<SealedSettingsRow>(
      `UPDATE alert_settings SET evaluated_at = $1
        WHERE account_id IN (
          SELECT account_id FROM alert_settings
           WHERE enabled AND (evaluated_at IS NULL OR evaluated_at <= $2)
           ORDER BY evaluated_at NULLS FIRST
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      [now, notSince, limit],
    );
    return rows;
  }

  /**
   * The available balance, and the settled cost, net of refunds, of usage that ended in
   * `(since, until]`.
   */
  async figures(
    accountId: string,
    since: Date,
    until: Date,
  ): Promise<{ availableMicroDzd: bigint; spentMicroDzd: bigint }> {
    const { rows } = await this.pool.query<{ available: string; spent: string }>(
      `SELECT COALESCE((SELECT posted_credits_micro_dzd - posted_debits_micro_dzd - pending_micro_dzd
                          FROM account_balances WHERE account_id = $1), 0) AS available,
              (SELECT COALESCE(sum(cost_micro_dzd - refunded_micro_dzd), 0) FROM usage_records
                WHERE account_id = $1 AND ended_at > $2 AND ended_at <= $3) AS spent`,
      [accountId, since, until],
    );
    return { availableMicroDzd: BigInt(rows[0]!.available), spentMicroDzd: BigInt(rows[0]!.spent) };
  }

  /**
   * Starts the next balance episode once this one's alert exists and money came in after it (a
   * credit, or a refund's reversal): a hold that settles for less than it reserved also lifts
   * the available balance, and must not re-arm the alert (it would fire again at the next
   * request). Guarded by the episode read, so replicas re-arming at once count up once.
   */
  async rearmBalance(accountId: string, episode: number, alertId: string): Promise<void> {
    await this.pool.query(
      `UPDATE alert_settings SET balance_low_episode = balance_low_episode + 1
        WHERE account_id = $1 AND balance_low_episode = $2
          AND EXISTS (SELECT 1 FROM alert_events e
                       WHERE e.id = $3
                         AND EXISTS (SELECT 1 FROM ledger_transactions t
                                      WHERE t.account_id = $1
                                        AND t.kind IN ('credit', 'reversal')
                                        AND t.created_at > e.occurred_at))`,
      [accountId, episode, alertId],
    );
  }

  /** False when the alert exists already (this window's, raised by anyone). */
  async insertEvent(event: NewAlertEvent, now: Date): Promise<boolean> {
    const result = await this.pool.query(
      `INSERT INTO alert_events (id, account_id, type, data, occurred_at)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`,
      [event.id, event.accountId, event.type, JSON.stringify(event.data), now],
    );
    return result.rowCount === 1;
  }

  /**
   * Claims up to `limit` unpublished events, oldest first (`FOR UPDATE SKIP LOCKED`, in one
   * transaction), hands them to `send`, and marks published the ids it answers.
   */
  async publishPending(
    limit: number,
    send: (rows: PendingEventRow[]) => Promise<string[]>,
  ): Promise<void> {
    await inPoolTransaction(this.pool, async (client) => {
      const { rows } = await client.query<PendingEventRow>(
        `SELECT e.id AS event_id, e.account_id AS event_account_id, e.type, e.data,
                e.occurred_at, ${S_COLUMNS}
           FROM alert_events e LEFT JOIN alert_settings s ON s.account_id = e.account_id
          WHERE e.published_at IS NULL
          ORDER BY e.occurred_at
          LIMIT $1
          FOR UPDATE OF e SKIP LOCKED`,
        [limit],
      );
      const done = await send(rows);
      await client.query(
        'UPDATE alert_events SET published_at = CURRENT_TIMESTAMP WHERE id = ANY($1::text[])',
        [done],
      );
    });
  }
}
