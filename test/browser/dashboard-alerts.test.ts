import { describe, expect, it } from '@jest/globals';
import type { AlertSettingsView } from '@gateway/contracts';
import { adminCall, open, ownerWithKey, useDashboardStack } from './dashboard-harness.js';

/*
 * Account alerts in the dashboard: an owner sets them on the Webhooks page,
 * the operator API reads exactly what was typed (the threshold as exact µDZD), the page shows
 * them again after a reload, and Remove deletes them.
 */

useDashboardStack();

describe('dashboard account alerts', () => {
  it('saves the alert settings typed on the Webhooks page and removes them', async () => {
    const { page, accountId } = await ownerWithKey('alerting-owner');
    await open(page, 'Webhooks');
    await page.getByLabel('Endpoint URL').fill('https://hooks.customer.test/alerts');
    await page.getByLabel('Balance below (DZD)').fill('12.345678');
    await page.getByLabel('Budget thresholds (%)').fill('75, 25');
    await page.getByLabel('Projected exhaustion (hours)').fill('36');
    await page.getByRole('button', { name: 'Save alerts' }).click();
    await page.getByText('Alerts saved.').waitFor();

    const saved = await adminCall<AlertSettingsView>('GET', `/accounts/${accountId}/alerts`);
    expect(saved).toMatchObject({
      url: 'https://hooks.customer.test/alerts',
      enabled: true,
      balance_below_micro_dzd: '12345678',
      budget_thresholds_percent: [25, 75],
      exhaustion_hours: 36,
    });

    await page.reload();
    await page.getByRole('heading', { name: 'Webhooks', level: 2 }).waitFor();
    const below = page.getByLabel('Balance below (DZD)');
    await expect(below.inputValue()).resolves.toBe('12.345678');
    await expect(page.getByLabel('Budget thresholds (%)').inputValue()).resolves.toBe('25, 75');

    await page.getByRole('button', { name: 'Remove' }).click();
    // Nothing left to remove: an empty form.
    await page.getByRole('button', { name: 'Remove' }).waitFor({ state: 'detached' });
    await expect(page.getByLabel('Endpoint URL').inputValue()).resolves.toBe('');
    await expect(adminCall('GET', `/accounts/${accountId}/alerts`)).rejects.toThrow(/404/);
  });
});
