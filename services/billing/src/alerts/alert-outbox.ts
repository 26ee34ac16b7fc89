/**
 * The alerts outbox: events not published yet go to the events exchange (`account.alert`) and
 * are marked published once the broker confirmed them. Rows are claimed `FOR UPDATE SKIP
 * LOCKED`, so replicas publish different events; a replica that dies between the broker's
 * confirmation and its commit leaves the event unpublished, and it is published again: the
 * dispatcher stores one delivery per event id (at least once here, once there).
 */
import type { Keyring } from '@gateway/crypto';
import { makeEnvelope, type Envelope } from '@gateway/contracts';
import type { MessageBus } from '@gateway/messaging';
import type { AlertRepository, PendingEventRow, SealedSettingsRow } from './alert-repository.js';
import { openSettings } from './alert-settings.js';

export interface AlertRoute {
  exchange: string;
  routingKey: string;
}

/** Why an event can never be sent (no message text: it could quote the sealed URL). */
export type Undeliverable = 'settings_unreadable' | 'envelope_invalid';

export interface PublishResult {
  published: number;
  /** Events of accounts whose alerts were turned off or removed meanwhile: never sent. */
  dropped: number;
  /**
   * Events that can never be sent (their settings no longer open, e.g. a retired `MASTER_KEY`
   * version, or their data no longer fits the envelope): marked done so they do not block every
   * later event, and reported with their ids (never their URL) for the operator.
   */
  undeliverable: { eventId: string; reason: Undeliverable }[];
}

export class AlertOutbox {
  constructor(
    private readonly repository: AlertRepository,
    private readonly keyring: Keyring,
    private readonly bus: MessageBus,
    private readonly route: AlertRoute,
  ) {}

  /**
   * Publishes up to `limit` pending events, oldest first; stops at the first broker failure (the
   * broker is down for all of them: the rest wait for the next tick).
   */
  async publishPending(limit: number): Promise<PublishResult> {
    let dropped = 0;
    let published = 0;
    const undeliverable: PublishResult['undeliverable'] = [];
    let failure: unknown;
    await this.repository.publishPending(limit, async (rows) => {
      const done: string[] = [];
      for (const row of rows) {
        if (!row.account_id || !row.enabled) {
          dropped += 1;
          done.push(row.event_id);
          continue;
        }
        const envelope = this.envelopeOf(row);
        if (typeof envelope === 'string') {
          undeliverable.push({ eventId: row.event_id, reason: envelope });
          done.push(row.event_id);
          continue;
        }
        try {
          await this.bus.publish(this.route, envelope, { correlationId: row.event_id });
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
    return { published, dropped, undeliverable };
  }

  /** The event's envelope, or why it can never be made. */
  private envelopeOf(row: PendingEventRow): Envelope<'account.alert'> | Undeliverable {
    let url: string;
    try {
      url = openSettings(this.keyring, row as SealedSettingsRow).url;
    } catch {
      return 'settings_unreadable';
    }
    try {
      return this.envelope(row, url);
    } catch {
      return 'envelope_invalid';
    }
  }

  private envelope(row: PendingEventRow, url: string) {
    return makeEnvelope('account.alert', {
      eventId: row.event_id,
      accountId: row.event_account_id,
      type: row.type,
      occurredAtMs: row.occurred_at.getTime(),
      webhookUrl: url,
      data: row.data,
    });
  }
}
