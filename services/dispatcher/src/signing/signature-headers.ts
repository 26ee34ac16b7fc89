import { createHmac } from 'node:crypto';
import { SIGNING_SECRET_PREFIX } from '../crypto/ids.js';

export type WebhookFormat = 'A' | 'B';

export interface SignInput {
  format: WebhookFormat;
  deliveryId: string;
  /** `webhook-id` (Standard Webhooks): the delivery id unless given (an alert's event id). */
  webhookId?: string;
  /** The exact bytes that will be sent. */
  body: Buffer;
  timestampS: number;
  /** Active secrets, oldest first (at least one). */
  secrets: readonly string[];
}

export const USER_AGENT = 'Service-Webhook/1.0';

const hmac = (key: Buffer | string, ...parts: (string | Buffer)[]) => {
  const mac = createHmac('sha256', key);
  for (const part of parts) mac.update(part);
  return mac.digest();
};

/**
 * Standard Webhooks derive the HMAC key by base64-decoding what follows `whsec_`; stripe-style
 * `v1` verifiers (and the spec's reference verifier) use the secret string itself as the key.
 */
const standardWebhooksKey = (secret: string): Buffer =>
  Buffer.from(secret.slice(SIGNING_SECRET_PREFIX.length), 'base64');

/**
 * Variant A: `t=<unix>,v1=<hex>[,v1=<hex>]`, HMAC-SHA256 keyed with the secret string over
 * `<t>.` + body, one `v1` per active secret (newest first).
 */
export function variantASignature(input: SignInput): string {
  const prefix = `${input.timestampS}.`;
  const signatures = [...input.secrets]
    .reverse()
    .map((secret) => `v1=${hmac(secret, prefix, input.body).toString('hex')}`);
  return [`t=${input.timestampS}`, ...signatures].join(',');
}

/**
 * Variant B carries one plain hex HMAC of the body. During a rotation the previous (oldest
 * active) secret keeps signing until it expires, so receivers that have not switched yet keep
 * verifying; the Standard Webhooks header carries both secrets meanwhile.
 */
export function variantBSignature(input: SignInput): string {
  return hmac(input.secrets[0]!, input.body).toString('hex');
}

/** `webhook-signature`: `v1,<base64>` per secret, space separated, over `<id>.<t>.` + body. */
export function standardWebhooksSignature(input: SignInput): string {
  const prefix = `${input.webhookId ?? input.deliveryId}.${input.timestampS}.`;
  return [...input.secrets]
    .reverse()
    .map(
      (secret) => `v1,${hmac(standardWebhooksKey(secret), prefix, input.body).toString('base64')}`,
    )
    .join(' ');
}

/** Every header of one attempt; recomputed per attempt (fresh `t`, secrets re-read). */
export function webhookHeaders(input: SignInput): Record<string, string> {
  if (input.secrets.length === 0) throw new Error('no active signing secret');
  const signature = input.format === 'B' ? variantBSignature(input) : variantASignature(input);
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'X-Service-Signature': signature,
    'X-Service-Delivery-Id': input.deliveryId,
    'webhook-id': input.webhookId ?? input.deliveryId,
    'webhook-timestamp': String(input.timestampS),
    'webhook-signature': standardWebhooksSignature(input),
  };
}
