import { describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { CHAT_MODEL } from '../abuse/abuse-stack.js';
import { waitFor } from '@gateway/testing';
import { screenshots } from './browser.js';
import {
  amountOf,
  chat,
  open,
  ownerWithKey,
  reloadLoaded,
  useDashboardStack,
} from './dashboard-harness.js';

/*
 * Receipts in Chromium against the real stack: each row of the owner's request log links
 * to its receipt, which shows what the request cost (the `_service.cost_dzd` the API answered)
 * and its hold, ledger entries and tokens.
 */

useDashboardStack();

/** A DZD amount as the page shows it (`DZD 0.0123`, grouping commas) → a number. */
async function dzdOf(page: Page, stat: string): Promise<number> {
  const text = (await amountOf(page, stat).textContent()) ?? '';
  return Number(/[\d.,]+/.exec(text)?.[0]?.replace(/,/g, '') ?? 'NaN');
}

describe('receipts in the dashboard', () => {
  it("the request log links each request to its receipt, showing the request's cost", async () => {
    const { page, key } = await ownerWithKey('receipt-owner');
    const first = await chat(key);
    const second = await chat(key);
    const service = (second as unknown as { _service: { cost_dzd: number; hold_id: string } })
      ._service;
    expect(service.hold_id).not.toBe(
      (first as unknown as { _service: { hold_id: string } })._service.hold_id,
    );

    await open(page, 'Usage');
    await waitFor(
      async () => {
        await reloadLoaded(page, page.getByRole('heading', { name: 'Requests' }));
        return (await page.getByTestId('request-row').count()) === 2 || undefined;
      },
      30_000,
      'two requests in the log',
    );
    // Newest first: the second request's row links to its own receipt.
    const link = page.getByTestId('request-row').first().getByTestId('receipt-link');
    await expect(link.getAttribute('href')).resolves.toBe(
      `/dashboard/usage/requests/${encodeURIComponent(service.hold_id)}`,
    );
    await link.click();
    await page.getByRole('heading', { name: 'Receipt', level: 2 }).waitFor();
    await page.getByText(service.hold_id, { exact: true }).waitFor();
    await expect(dzdOf(page, 'net-cost')).resolves.toBe(service.cost_dzd);
    await expect(dzdOf(page, 'settled')).resolves.toBe(service.cost_dzd);
    await expect(dzdOf(page, 'refunded')).resolves.toBe(0);
    await page.getByText(CHAT_MODEL, { exact: true }).waitFor();
    await screenshots(page, 'receipt');

    await page.getByRole('link', { name: 'Back to usage' }).click();
    await page.getByRole('heading', { name: 'Requests' }).waitFor();
  });
});
