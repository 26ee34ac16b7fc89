import {
  EnvelopeError,
  parseEnvelope,
  type AccountAlertPayload,
  type InferenceCompletedPayload,
  type ResponseEndedPayload,
} from '@gateway/contracts';
import type { Handler } from '@gateway/messaging';
import { injectTraceContext, tracingEnabled, type Logger } from '@gateway/observability';
import { batchOrEach, NaturalBatcher } from '@gateway/runtime';
import { newDeliveryId } from '../crypto/ids.js';
import type { Keyring } from '@gateway/crypto';
import { rowAad } from '../crypto/row-aad.js';
import type { WebhookFormat } from '../signing/signature-headers.js';
import { alertBody, renderBody, responseEndedBody } from './bodies.js';
import {
  COMPLETION_EVENT,
  type DeliveryRepository,
  type NewDelivery,
} from './delivery-repository.js';
import { firstDelayMs, type RetryPolicy } from './schedule.js';

/** What is sealed per delivery: where it goes and the exact body bytes (as UTF-8 text). */
export interface DeliveryPayload {
  url: string;
  body: string;
}

export interface DeliveryIntakeOptions {
  repository: DeliveryRepository;
  box: Keyring;
  retentionMs: number;
  policies: Record<WebhookFormat, RetryPolicy>;
}

/**
 * Deliveries stored per statement at most: above the consumer's prefetch (16), so a burst of
 * events (a backlog after a restart) goes in a few statements instead of one each.
 */
const INSERT_BATCH_MAX = 64;
/** Insert statements running at once; the deliveries arriving meanwhile wait for the next. */
const INSERTS_IN_FLIGHT = 2;

/** Turns a completion event into a stored, sealed, scheduled delivery. */
export class DeliveryIntake {
  /** Natural batching: an event arriving alone is stored at once, alone. */
  private readonly inserts: NaturalBatcher<NewDelivery, boolean>;

  constructor(private readonly options: DeliveryIntakeOptions) {
    const { repository } = options;
    // One statement for the batch; item by item if it fails, so one event that cannot be
    // stored fails alone (the bus retries it) and never its neighbours.
    const send = batchOrEach(
      (deliveries: NewDelivery[]) => repository.insertMany(deliveries),
      (delivery: NewDelivery) => repository.insert(delivery),
    );
    this.inserts = new NaturalBatcher(send, {
      maxBatchSize: INSERT_BATCH_MAX,
      maxInFlight: INSERTS_IN_FLIGHT,
    });
  }

  /** Idempotent on the job id: a second event for the same job stores nothing. */
  async accept(
    event: InferenceCompletedPayload,
  ): Promise<{ deliveryId: string; created: boolean }> {
    const format: WebhookFormat = event.webhookFormat ?? 'A';
    const deliveryId = newDeliveryId();
    const body = renderBody(format, deliveryId, event).toString('utf8');
    return this.store(deliveryId, format, COMPLETION_EVENT, event.jobId, event.accountId, {
      url: event.webhookUrl,
      body,
    });
  }

  /**
   * An account alert: signed and retried as format A, its body in the Standard
   * Webhooks shape. Idempotent on the alert's event id (stored as the delivery's `job_id`).
   */
  async acceptAlert(event: AccountAlertPayload): Promise<{ deliveryId: string; created: boolean }> {
    const deliveryId = newDeliveryId();
    const body = alertBody(event).toString('utf8');
    return this.store(deliveryId, 'A', event.type, event.eventId, event.accountId, {
      url: event.webhookUrl,
      body,
    });
  }

  /**
   * A background response's end: signed and retried as format A, its body in the
   * Standard Webhooks shape, as alerts. Idempotent on the response id.
   */
  async acceptResponseEnded(
    event: ResponseEndedPayload,
  ): Promise<{ deliveryId: string; created: boolean }> {
    const deliveryId = newDeliveryId();
    const body = responseEndedBody(event).toString('utf8');
    return this.store(deliveryId, 'A', event.type, event.eventId, event.accountId, {
      url: event.webhookUrl,
      body,
    });
  }

  private async store(
    deliveryId: string,
    format: WebhookFormat,
    eventType: string,
    jobId: string,
    accountId: string,
    payload: DeliveryPayload,
  ): Promise<{ deliveryId: string; created: boolean }> {
    const sealed = this.options.box.seal(
      Buffer.from(JSON.stringify(payload), 'utf8'),
      rowAad(accountId, deliveryId),
    );
    const created = await this.inserts.submit({
      id: deliveryId,
      jobId,
      eventType,
      accountId,
      format,
      sealed,
      retentionMs: this.options.retentionMs,
      firstDelayMs: firstDelayMs(this.options.policies[format]),
      traceParent: currentTraceParent(),
    });
    return { deliveryId, created };
  }
}

/** The current span's `traceparent` (the completion event's consumer span), or null. */
function currentTraceParent(): string | null {
  if (!tracingEnabled()) return null;
  const carrier: Record<string, string> = {};
  injectTraceContext(carrier);
  return carrier.traceparent ?? null;
}

/** The envelope's `kind`, read before validating it against that kind's schema. */
const kindOf = (body: unknown): unknown => {
  try {
    const value: unknown =
      typeof body === 'string' || body instanceof Uint8Array
        ? JSON.parse(Buffer.from(body).toString('utf8'))
        : body;
    return typeof value === 'object' && value !== null ? (value as { kind?: unknown }).kind : null;
  } catch {
    return null;
  }
};

/**
 * Consumer of `webhook.completions` (job results and account alerts). The event is
 * acknowledged only once its delivery is stored; an unreadable event is dead-lettered, a
 * storage failure retried later by the bus.
 */
export function completionHandler(
  intake: DeliveryIntake,
  logger: Logger,
  onQueued: () => void = () => {},
): Handler<unknown> {
  const alerts = eventHandler('account.alert', intake, logger, onQueued);
  const responses = eventHandler('response.ended', intake, logger, onQueued);
  return async (message) => {
    const kind = kindOf(message.body);
    if (kind === 'account.alert') return alerts(message);
    if (kind === 'response.ended') return responses(message);
    let event: InferenceCompletedPayload;
    try {
      event = parseEnvelope('inference.completed', message.body).payload;
    } catch (error) {
      if (!(error instanceof EnvelopeError)) throw error;
      logger.warn({ messageId: message.messageId, reason: error.message }, 'bad completion event');
      return 'dead-letter';
    }
    try {
      const { deliveryId, created } = await intake.accept(event);
      // The request id ties the delivery to the edge and worker log lines of the same request.
      const ids = { jobId: event.jobId, requestId: event.requestId };
      if (created) {
        logger.info({ ...ids, deliveryId }, 'delivery queued');
        // The first attempt goes out now, not at the next dispatch tick.
        onQueued();
      } else {
        logger.info(ids, 'completion already stored');
      }
      return 'ack';
    } catch (error) {
      logger.error({ jobId: event.jobId, err: error }, 'storing completion failed; retry later');
      return 'retry';
    }
  };
}

/**
 * An account alert or an ended response: both `{eventId, accountId, type, webhookUrl}` events,
 * one delivery per event id.
 */
function eventHandler(
  kind: 'account.alert' | 'response.ended',
  intake: DeliveryIntake,
  logger: Logger,
  onQueued: () => void,
): Handler<unknown> {
  return async (message) => {
    let event: AccountAlertPayload | ResponseEndedPayload;
    try {
      event = parseEnvelope(kind, message.body).payload;
    } catch (error) {
      if (!(error instanceof EnvelopeError)) throw error;
      logger.warn({ messageId: message.messageId, kind, reason: error.message }, 'bad event');
      return 'dead-letter';
    }
    const ids = { eventId: event.eventId, type: event.type, accountId: event.accountId };
    try {
      const { deliveryId, created } =
        kind === 'account.alert'
          ? await intake.acceptAlert(event as AccountAlertPayload)
          : await intake.acceptResponseEnded(event as ResponseEndedPayload);
      if (created) {
        logger.info({ ...ids, deliveryId }, 'event delivery queued');
        onQueued();
      } else {
        logger.info(ids, 'event already stored');
      }
      return 'ack';
    } catch (error) {
      logger.error({ ...ids, err: error }, 'storing event failed; retry later');
      return 'retry';
    }
  };
}
