import { EnvelopeError, parseEnvelope, type InferenceCompletedPayload } from '@gateway/contracts';
import type { Handler } from '@gateway/messaging';
import { injectTraceContext, tracingEnabled, type Logger } from '@gateway/observability';
import { newDeliveryId } from '../crypto/ids.js';
import type { Keyring } from '@gateway/crypto';
import { rowAad } from '../crypto/row-aad.js';
import type { WebhookFormat } from '../signing/signature-headers.js';
import { renderBody } from './bodies.js';
import type { DeliveryRepository } from './delivery-repository.js';
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

/** Turns a completion event into a stored, sealed, scheduled delivery. */
export class DeliveryIntake {
  constructor(private readonly options: DeliveryIntakeOptions) {}

  /** Idempotent on the job id: a second event for the same job stores nothing. */
  async accept(
    event: InferenceCompletedPayload,
  ): Promise<{ deliveryId: string; created: boolean }> {
    const format: WebhookFormat = event.webhookFormat ?? 'A';
    const deliveryId = newDeliveryId();
    const body = renderBody(format, deliveryId, event).toString('utf8');
    const payload: DeliveryPayload = { url: event.webhookUrl, body };
    const sealed = this.options.box.seal(
      Buffer.from(JSON.stringify(payload), 'utf8'),
      rowAad(event.accountId, deliveryId),
    );
    const created = await this.options.repository.insert({
      id: deliveryId,
      jobId: event.jobId,
      accountId: event.accountId,
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

/**
 * Consumer of `webhook.completions`. The event is acknowledged only once its delivery is
 * stored; an unreadable event is dead-lettered, a storage failure retried later by the bus.
 */
export function completionHandler(
  intake: DeliveryIntake,
  logger: Logger,
  onQueued: () => void = () => {},
): Handler<unknown> {
  return async (message) => {
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
