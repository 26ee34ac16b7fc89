import {
  microDzdToDzd,
  type AccountAlertPayload,
  type AlertWebhookBody,
  type InferenceCompletedPayload,
  type ResponseEndedPayload,
  type ResponseWebhookBody,
} from '@gateway/contracts';
import type { WebhookFormat } from '../signing/signature-headers.js';

/**
 * Webhook bodies, field for field as the spec's Events section lists them. Rendered once, when
 * the completion event is stored: every attempt sends the same bytes.
 */

const costDzd = (event: InferenceCompletedPayload): number =>
  event.costMicroDzd === null ? 0 : microDzdToDzd(BigInt(event.costMicroDzd));

/** Variant A. `results` and `error` never travel together (and `results` is never null). */
export function variantABody(deliveryId: string, event: InferenceCompletedPayload) {
  if (event.status === 'failed') {
    return {
      id: deliveryId,
      status: 'failed',
      usage: { prompt_tokens: 0, completion_tokens: 0 },
      cost_dzd: null,
      settlement: 'failed',
      error: { type: 'inference_failed', message: event.error?.message ?? 'Inference failed.' },
    };
  }
  return {
    id: deliveryId,
    status: 'succeeded',
    usage: {
      prompt_tokens: event.usage.promptTokens,
      completion_tokens: event.usage.completionTokens,
    },
    cost_dzd: costDzd(event),
    settlement: 'settled',
    // Embedding models answer `embeddings` instead of `results`, as the synchronous response.
    ...(event.embeddings ? { embeddings: event.embeddings } : { results: event.results ?? [] }),
  };
}

/** Variant B: `results` is an object (one native input gives one result). */
export function variantBBody(event: InferenceCompletedPayload) {
  if (event.status === 'failed') {
    return {
      request_id: event.jobId,
      inference_status: { status: 'failed', runtime_ms: 0, cost: 0 },
    };
  }
  const results = event.embeddings
    ? { embeddings: event.embeddings }
    : { generated_text: event.results?.[0]?.generated_text ?? '' };
  return {
    request_id: event.jobId,
    inference_status: { status: 'succeeded', runtime_ms: event.runtimeMs, cost: costDzd(event) },
    results,
  };
}

export function renderBody(
  format: WebhookFormat,
  deliveryId: string,
  event: InferenceCompletedPayload,
): Buffer {
  const body = format === 'B' ? variantBBody(event) : variantABody(deliveryId, event);
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/** An account alert: the Standard Webhooks shape `{type, timestamp, data}`. */
export function alertBody(event: AccountAlertPayload): Buffer {
  const body: AlertWebhookBody = {
    type: event.type,
    timestamp: new Date(event.occurredAtMs).toISOString(),
    data: event.data,
  };
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/** A background response ended: `{type, timestamp, data: {id}}`, as alerts. */
export function responseEndedBody(event: ResponseEndedPayload): Buffer {
  const body: ResponseWebhookBody = {
    type: event.type,
    timestamp: new Date(event.occurredAtMs).toISOString(),
    data: event.data,
  };
  return Buffer.from(JSON.stringify(body), 'utf8');
}
