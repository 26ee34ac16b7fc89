/**
 * A background response's webhook: its URL sealed with the MASTER_KEY keyring (AAD binding it to
 * its account and response), and the outbox that announces the response's end to the dispatcher
 * (`response.ended` on the events exchange), which signs and delivers it as it does job webhooks
 * and account alerts. At least once here (a replica that dies between the broker's confirmation
 * and its commit publishes it again), once there (one delivery per response id).
 */
import type { Keyring, SealedValue } from '@gateway/crypto';
import { makeEnvelope, type Envelope } from '@gateway/contracts';
import type { MessageBus } from '@gateway/messaging';
import type {
  PendingWebhookRow,
  ResponseWebhookRepository,
} from './response-webhook-repository.js';

interface WebhookOwner {
  accountId: string;
  responseId: string;
}

const webhookAad = (owner: WebhookOwner): string =>
  `response_webhook:${owner.accountId}:${owner.responseId}`;

export const sealWebhookUrl = (keyring: Keyring, owner: WebhookOwner, url: string): SealedValue =>
  keyring.seal(Buffer.from(url, 'utf8'), webhookAad(owner));

export interface WebhookRoute {
  exchange: string;
  routingKey: string;
}

export interface WebhookPublishResult {
  published: number;
  /**
   * Webhooks that can never be sent (their URL no longer opens, e.g. a retired `MASTER_KEY`
   * version): marked done so they do not block later ones; reported by response id only.
   */
  undeliverable: string[];
}

export class ResponseWebhookOutbox {
  constructor(
    private readonly repository: ResponseWebhookRepository,
    private readonly keyring: Keyring,
    private readonly bus: MessageBus,
    private readonly route: WebhookRoute,
  ) {}

  /**
   * Publishes up to `limit` ended responses' webhooks, oldest first; stops at the first broker
   * failure (the rest wait for the next run) and throws it.
   */
  async publishPending(limit: number): Promise<WebhookPublishResult> {
    let published = 0;
    const undeliverable: string[] = [];
    let failure: unknown;
    await this.repository.publishPending(limit, async (rows) => {
      const done: string[] = [];
      for (const row of rows) {
        const envelope = this.#envelopeOf(row);
        if (envelope === null) {
          undeliverable.push(row.response_id);
          done.push(row.response_id);
          continue;
        }
        try {
          await this.bus.publish(this.route, envelope, { correlationId: row.response_id });
          published += 1;
          done.push(row.response_id);
        } catch (error) {
          failure = error;
          break;
        }
      }
      return done;
    });
    if (failure !== undefined) throw failure;
    return { published, undeliverable };
  }

  /**
   * The event, or null when it can never be made: its URL no longer opens, or the event breaks
   * its schema (neither is quoted: the URL may hold a secret).
   */
  #envelopeOf(row: PendingWebhookRow): Envelope<'response.ended'> | null {
    try {
      const sealed = {
        ciphertext: row.url_ciphertext,
        nonce: row.url_nonce,
        tag: row.url_tag,
        keyVersion: row.url_key_version,
      };
      const owner = { accountId: row.account_id, responseId: row.response_id };
      const url = this.keyring.open(sealed, webhookAad(owner)).toString('utf8');
      return makeEnvelope('response.ended', {
        eventId: row.response_id,
        accountId: row.account_id,
        occurredAtMs: row.ended_at.getTime(),
        webhookUrl: url,
        type: row.type,
        data: { id: row.response_id },
      });
    } catch {
      return null;
    }
  }
}

/**
 * Runs the outbox every `intervalMs` (never two runs at once: the next waits for the previous),
 * until the returned stop is called; stop waits for a run in progress.
 */
export function startWebhookOutbox(
  outbox: Pick<ResponseWebhookOutbox, 'publishPending'>,
  options: {
    intervalMs: number;
    batchSize: number;
    onPublished: (result: WebhookPublishResult) => void;
    onError: (error: unknown) => void;
  },
): () => Promise<void> {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    running = outbox
      .publishPending(options.batchSize)
      .then((result) => {
        if (result.published > 0 || result.undeliverable.length > 0) options.onPublished(result);
      })
      .catch(options.onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.intervalMs).unref();
      });
  };
  timer = setTimeout(tick, options.intervalMs).unref();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
