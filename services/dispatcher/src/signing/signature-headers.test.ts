import { describe, expect, it } from '@jest/globals';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { newSigningSecret } from '../crypto/ids.js';
import { variantBSignature, webhookHeaders, type SignInput } from './signature-headers.js';

// stripe's verifier is a static utility; the API key is never used.
const stripe = new Stripe('sk_test_unused');
const nowS = () => Math.floor(Date.now() / 1000);

function signed(secrets: string[], format: 'A' | 'B' = 'A') {
  const input: SignInput = {
    format,
    deliveryId: 'whd_7a1f0c2e-4b7d-4d44-9a36-0d7e3c2b1a00',
    body: Buffer.from('{"id":"whd_x","status":"succeeded","results":[{"generated_text":"hé"}]}'),
    timestampS: nowS(),
    secrets,
  };
  return { input, headers: webhookHeaders(input) };
}

const flipOneByte = (body: Buffer): Buffer => {
  const copy = Buffer.from(body);
  copy[5] = copy[5]! ^ 0x01;
  return copy;
};

const stripeVerifies = (body: Buffer, header: string, secret: string): boolean => {
  try {
    return stripe.webhooks.signature!.verifyHeader(body.toString('utf8'), header, secret, 300);
  } catch {
    return false;
  }
};

const standardVerifies = (body: Buffer, headers: Record<string, string>, secret: string) => {
  try {
    new Webhook(secret).verify(body.toString('utf8'), headers);
    return true;
  } catch {
    return false;
  }
};

describe('webhook signatures', () => {
  it('Variant A verifies with stripe and Standard Webhooks; a 1-byte change fails', () => {
    const secret = newSigningSecret();
    const { input, headers } = signed([secret]);
    const header = headers['X-Service-Signature']!;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(stripeVerifies(input.body, header, secret)).toBe(true);
    expect(standardVerifies(input.body, headers, secret)).toBe(true);

    const tampered = flipOneByte(input.body);
    expect(stripeVerifies(tampered, header, secret)).toBe(false);
    expect(standardVerifies(tampered, headers, secret)).toBe(false);
    expect(stripeVerifies(input.body, header, newSigningSecret())).toBe(false);
  });

  it('matches what stripe itself generates for the same timestamp and secret', () => {
    const secret = newSigningSecret();
    const { input, headers } = signed([secret]);
    const expected = stripe.webhooks.generateTestHeaderString({
      payload: input.body.toString('utf8'),
      secret,
      timestamp: input.timestampS,
    });
    expect(headers['X-Service-Signature']).toBe(expected);
  });

  it('during a rotation carries one signature per secret, and each secret verifies', () => {
    const [previous, current] = [newSigningSecret(), newSigningSecret()];
    const { input, headers } = signed([previous, current]);
    expect(headers['X-Service-Signature']!.match(/v1=/g)).toHaveLength(2);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [previous, current]) {
      expect(stripeVerifies(input.body, headers['X-Service-Signature']!, secret)).toBe(true);
      expect(standardVerifies(input.body, headers, secret)).toBe(true);
    }
  });

  it('sends the fixed headers, with the delivery id as the Standard Webhooks id', () => {
    const { input, headers } = signed([newSigningSecret()]);
    expect(headers).toMatchObject({
      'Content-Type': 'application/json',
      'User-Agent': 'Service-Webhook/1.0',
      'X-Service-Delivery-Id': input.deliveryId,
      'webhook-id': input.deliveryId,
      'webhook-timestamp': String(input.timestampS),
    });
  });

  it('Variant B is the plain hex HMAC of the body, by the oldest active secret', () => {
    const [previous, current] = [newSigningSecret(), newSigningSecret()];
    const { input, headers } = signed([previous, current], 'B');
    expect(headers['X-Service-Signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(headers['X-Service-Signature']).toBe(
      variantBSignature({ ...input, secrets: [previous] }),
    );
    expect(standardVerifies(input.body, headers, current)).toBe(true);
  });

  it('refuses to sign without a secret', () => {
    expect(() => signed([])).toThrow(/no active signing secret/);
  });
});
