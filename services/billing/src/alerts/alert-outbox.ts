/**
 * The alerts outbox: events not published yet go to the events exchange (`account.alert`) and
 * are marked published once the broker confirmed them. Rows are claimed `FOR UPDATE SKIP
 * LOCKED`, so replicas publish different events; a replica that dies between the broker's
 * confirmation and its commit leaves the event unpublished, and it is published again: the
 * dispatcher stores one delivery per event id (at least once here, once there).
 */
import type { Keyring } from '@gateway/crypto';
import { makeEnvelope } from '@gateway/contracts';
import type { MessageBus } from '@gateway/messaging';
import type { AlertRepository, PendingEventRow, SealedSettingsRow } from './alert-repository.js';
import { openSettings } from './alert-settings.js';

export interface AlertRoute {
  exchange: string;
  routingKey: string;
}

export interface PublishResult {
  published: number;
  /** Events of accounts whose alerts were turned off or removed meanwhile: never sent. */
  dropped: number;
}

export class AlertOutbox {
  constructor(
    private readonly repository: AlertRepository,
    private readonly keyring: Keyring,
    private readonly bus: MessageBus,
    private readonly route: AlertRoute,
  ) {}

  /** Publishes up to `limit` pending events, oldest first; stops at the first broker failure. */
  async publishPending(limit: number): Promise<PublishResult> {
    let dropped = 0;
    let published = 0;
    let failure: unknown;
    await this.repository.publishPending(limit, async (rows) => {
      const done: string[] = [];
      for (const row of rows) {
        if (!row.account_id || !row.enabled) {
          dropped += 1;
          done.push(row.event_id);
          continue;
        }
        try {
          await this.publish(row);
          published += 1;
          done.push(row.event_id);
        } catch (error) {
          failure = error;
          break;
        }
      }
      return done;
    });
    // The events sent before the failure stay marked; the rest wait for the next tick.
    if (failure !== undefined) throw failure;
    return { published, dropped };
  }

  private async publish(row: PendingEventRow): Promise<void> {
    const settings = openSettings(this.keyring, row as SealedSettingsRow);
    const envelope = makeEnvelope('account.alert', {
      eventId: row.event_id,
      accountId: row.event_account_id,
      type: row.type,
      occurredAtMs: row.occurred_at.getTime(),
      webhookUrl: settings.url,
      data: row.data,
    });
    await this.bus.publish(this.route, envelope, { correlationId: row.event_id });
  }
}
