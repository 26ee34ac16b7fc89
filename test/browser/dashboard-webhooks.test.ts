import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import {
  startReceiver,
  type ReceivedRequest,
  type Receiver,
} from '../../services/dispatcher/src/testing/receiver.suite.js';
import { createTestCertificates } from '../../services/dispatcher/src/testing/test-ca.suite.js';
import { NATIVE_MODEL } from '../abuse/abuse-stack.js';
import { waitFor } from '@gateway/testing';
import { open, ownerWithKey, takeShownKey, useDashboardStack } from './dashboard-harness.js';

/*
 * A webhook secret rotated in the dashboard signs the very next delivery beside the previous
 * one; after "Expire previous now" only the current one signs. The receiver is HTTPS on
 * 127.0.0.1 with a certificate from a throwaway CA; only the browser stack's dispatcher is told
 * to trust it (WEBHOOK_CA_FILE) and to allow loopback destinations
 * (WEBHOOK_ALLOW_INSECURE_LOOPBACK), the product's defaults stay strict.
 */

// Made before the stack starts: the dispatcher reads the CA file when it boots.
const certs = createTestCertificates();
let receiver: Receiver;
const { stack } = useDashboardStack({
  dispatcherEnv: () => ({
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
    WEBHOOK_CA_FILE: certs.caFile,
    DISPATCH_INTERVAL_MS: '50',
  }),
});

beforeAll(async () => {
  receiver = await startReceiver(certs);
});

afterAll(async () => {
  await receiver?.close();
  certs.remove();
});

/** The secrets the Webhooks page shows after Reveal, then hidden again. */
async function revealedSecrets(page: Page): Promise<string[]> {
  await page.getByRole('button', { name: 'Reveal' }).click();
  await page.getByTestId('revealed-secret').first().waitFor();
  const secrets = await page.getByTestId('revealed-secret').allTextContents();
  await page.getByRole('button', { name: 'Hide' }).click();
  await page.getByTestId('revealed-secret').first().waitFor({ state: 'detached' });
  return secrets.map((secret) => secret.trim());
}

/** `v1` signatures of `X-Service-Signature: t=<unix>,v1=<hex>[,v1=<hex>]` that `secret` makes. */
function signaturesBy(secret: string, delivery: ReceivedRequest): number {
  const parts = String(delivery.headers['x-service-signature'])
    .split(',')
    .map((part) => part.split('='));
  const t = parts.find(([key]) => key === 't')?.[1] ?? '';
  const expected = createHmac('sha256', secret).update(`${t}.`).update(delivery.body).digest();
  return parts.filter(([key, hex]) => {
    const given = Buffer.from(hex ?? '', 'hex');
    return key === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  }).length;
}

describe('dashboard webhooks, delivered', () => {
  it('rotating in the UI makes the next delivery carry two signatures, new and previous', async () => {
    const { page, key } = await ownerWithKey('rotating-owner');
    await open(page, 'Webhooks');
    const [previous] = await revealedSecrets(page);
    expect(previous).toMatch(/^whsec_/);

    await page.getByRole('button', { name: 'Rotate' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
    const shownOnce = await takeShownKey(page);
    await waitFor(
      async () => (await page.locator('[data-testid^="secret-whs_"]').count()) === 2,
      10_000,
      'two secrets',
    );
    const both = await revealedSecrets(page);
    expect(both).toHaveLength(2);
    expect(both).toContain(previous);
    const current = both.find((secret) => secret !== previous)!;
    expect(current).toBe(shownOnce);

    const submitted = await fetch(`${stack().edgeUrl}/v1/inference/${NATIVE_MODEL}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        input: 'Hello from the browser test',
        parameters: { max_new_tokens: 8 },
        webhook: `https://127.0.0.1:${receiver.port}/rotated`,
      }),
    });
    expect(submitted.status).toBe(200);
    const delivery = await waitFor(
      () => receiver.requestsTo('/rotated')[0],
      30_000,
      'the delivery after rotation',
    );
    const header = String(delivery.headers['x-service-signature']);
    expect(header.split(',').filter((part) => part.startsWith('v1='))).toHaveLength(2);
    expect(signaturesBy(current, delivery)).toBe(1);
    expect(signaturesBy(previous!, delivery)).toBe(1);
    expect(signaturesBy('whsec_not-the-secret', delivery)).toBe(0);
  });

  it('"Expire previous now" (confirmed) leaves one signature on the next delivery, the current secret\'s', async () => {
    const { page, key } = await ownerWithKey('expiring-owner');
    await open(page, 'Webhooks');
    const [previous] = await revealedSecrets(page);
    // One secret: nothing to expire yet.
    await expect(page.getByRole('button', { name: 'Expire previous now' }).count()).resolves.toBe(
      0,
    );

    await page.getByRole('button', { name: 'Rotate' }).click();
    await expect(page.getByTestId('rotate-drops-previous').count()).resolves.toBe(0);
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
    const current = await takeShownKey(page);
    await waitFor(
      async () => (await page.locator('[data-testid^="secret-whs_"]').count()) === 2,
      10_000,
      'two secrets',
    );

    // A second rotation would drop the previous secret at once: the confirmation says so.
    await page.getByRole('button', { name: 'Rotate' }).click();
    await page.getByTestId('rotate-drops-previous').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Expire previous now' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('only the current secret signs').waitFor();
    await dialog.getByRole('button', { name: 'Expire previous now' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('The previous secret no longer signs.').waitFor();
    await waitFor(
      async () => (await page.locator('[data-testid^="secret-whs_"]').count()) === 1,
      10_000,
      'one secret',
    );
    await expect(page.getByRole('button', { name: 'Expire previous now' }).count()).resolves.toBe(
      0,
    );
    expect(await revealedSecrets(page)).toEqual([current]);

    const submitted = await fetch(`${stack().edgeUrl}/v1/inference/${NATIVE_MODEL}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        input: 'Hello after expiring the previous secret',
        parameters: { max_new_tokens: 8 },
        webhook: `https://127.0.0.1:${receiver.port}/expired-previous`,
      }),
    });
    expect(submitted.status).toBe(200);
    const delivery = await waitFor(
      () => receiver.requestsTo('/expired-previous')[0],
      30_000,
      'the delivery after expiring the previous secret',
    );
    const header = String(delivery.headers['x-service-signature']);
    expect(header.split(',').filter((part) => part.startsWith('v1='))).toHaveLength(1);
    expect(signaturesBy(current, delivery)).toBe(1);
    expect(signaturesBy(previous!, delivery)).toBe(0);
    expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });
});
