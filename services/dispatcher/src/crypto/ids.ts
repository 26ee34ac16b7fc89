import { randomBytes, randomUUID } from 'node:crypto';

/** `X-Service-Delivery-Id` and Standard Webhooks `webhook-id`: made once per delivery. */
export const newDeliveryId = (): string => `whd_${randomUUID()}`;

/** Row id of a signing secret (never the secret itself). */
export const newSecretId = (): string => `whs_${randomBytes(12).toString('hex')}`;

export const SIGNING_SECRET_PREFIX = 'whsec_';

/** Standard Webhooks style: `whsec_` + base64 of 32 random bytes. */
export const newSigningSecret = (): string =>
  SIGNING_SECRET_PREFIX + randomBytes(32).toString('base64');
