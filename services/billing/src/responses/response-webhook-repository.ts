/**
 * The webhooks of background responses in PostgreSQL (`response_webhooks`, migration
 * 20270123090000): the ended, unpublished ones claimed for billing's outbox. They are inserted
 * and ended by the stored-response statements (response-repository.ts), in the same statement
 * as their response.
 */
import type pg from 'pg';
import { inPoolTransaction } from '@gateway/runtime';
import type { ResponseWebhookType } from '@gateway/contracts';

export interface PendingWebhookRow {
  response_id: string;
  account_id: string;
  url_ciphertext: Buffer;
  url_nonce: Buffer;
  url_tag: Buffer;
  url_key_version: number;
  type: ResponseWebhookType;
  ended_at: Date;
}

export class ResponseWebhookRepository {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Claims up to `limit` ended, unpublished webhooks (oldest first, `FOR UPDATE SKIP LOCKED`:
   * replicas take different ones), hands them to `send`, and marks published the ids it returns,
   * in one transaction.
   */
  async publishPending(
    limit: number,
    send: (rows: PendingWebhookRow[]) => Promise<string[]>,
  ): Promise<void> {
    await inPoolTransaction(this.pool, async (client) => {
      const { rows } = await client.query<PendingWebhookRow>(
        `SELECT response_id, account_id, url_ciphertext, url_nonce, url_tag, url_key_version,
                type, ended_at
           FROM response_webhooks
          WHERE ended_at IS NOT NULL AND published_at IS NULL
          ORDER BY ended_at
          LIMIT $1
          FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      const done = rows.length === 0 ? [] : await send(rows);
      if (done.length > 0) {
        await client.query(
          `UPDATE response_webhooks SET published_at = CURRENT_TIMESTAMP
            WHERE response_id = ANY($1::text[])`,
          [done],
        );
      }
    });
  }
}
