import { describe, expect, it } from '@jest/globals';
import type { Locator, Page } from 'playwright-core';
import type { BudgetList, BudgetView } from '@gateway/contracts';
import { waitFor } from '@gateway/testing';
import { screenshots } from './browser.js';
import {
  adminCall,
  chat,
  open,
  operatorViewer,
  ownerWithKey,
  probe,
  refusal,
  useDashboardStack,
} from './dashboard-harness.js';

/*
 * Budgets in the dashboard, in Chromium against the real stack: an operator
 * sets a key's and a scoped token's budget on the account's page, the owner's key spends
 * against it, and the owner's usage page shows the spend (figures and bar) and the API keys
 * page the key's budget; the owner caps the key to what it spent and the next request is
 * refused 402 `budget_exhausted`; the operator removes the budgets.
 */

useDashboardStack();

/** `µDZD` as the exact decimal the page shows (at least 2 decimals, no trailing zeros beyond). */
function decimalOf(micro: string): string {
  const value = BigInt(micro);
  const fraction = String(value % 1_000_000n)
    .padStart(6, '0')
    .replace(/0{1,4}$/, '');
  return `${value / 1_000_000n}.${fraction}`;
}

/** The amount shown in `locator` (`DZD 1,234.50`) as a plain decimal. */
async function amountIn(locator: Locator): Promise<string> {
  return ((await locator.textContent()) ?? '').replace(/[^0-9.]/g, '');
}

async function budgetsOf(accountId: string): Promise<BudgetView[]> {
  return (await adminCall<BudgetList>('GET', `/accounts/${accountId}/budgets`)).data;
}

/** Fills the "Set a budget" dialog on the operator's account page. */
async function setBudget(
  page: Page,
  fields: { kind: 'API key' | 'Scoped token'; owner: string; limit: string; period: string },
) {
  await page.getByRole('button', { name: 'Set a budget' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText(fields.kind, { exact: true }).click();
  await dialog.getByLabel(fields.kind === 'API key' ? 'Key name' : 'Token id').fill(fields.owner);
  await dialog.getByLabel('Limit (DZD)').fill(fields.limit);
  await dialog.getByLabel('Period', { exact: true }).click();
  await page.getByRole('option', { name: fields.period }).click();
  await dialog.getByLabel('Time zone', { exact: true }).fill('Africa/Algiers');
  await page.getByRole('option', { name: 'Africa/Algiers' }).click();
  await dialog.getByRole('button', { name: 'Save budget' }).click();
  await dialog.waitFor({ state: 'detached' });
}

describe('dashboard budgets', () => {
  it('an operator sets budgets, the owner sees the spend against them and caps the key', async () => {
    const { page: owner, key, accountId } = await ownerWithKey('budget-owner');
    const issued = await probe(owner, 'POST', '/dashboard/api/scoped-tokens', {
      api_key_name: 'main',
    });
    expect(issued.status).toBe(201);
    const tokens = await probe(owner, 'GET', '/dashboard/api/scoped-tokens');
    const tokenId = (JSON.parse(tokens.text) as { data: { id: string }[] }).data[0]!.id;

    const ops = await operatorViewer('budget-ops@gateway.test', 'operator');
    await ops.goto(`/dashboard/operator/accounts/${accountId}`);
    await ops.getByRole('heading', { name: 'budget-owner' }).waitFor();
    await ops.getByText('No budgets').waitFor();
    await setBudget(ops, { kind: 'API key', owner: 'main', limit: '50', period: 'Per day' });
    await setBudget(ops, {
      kind: 'Scoped token',
      owner: tokenId,
      limit: '2.5',
      period: 'Per calendar month',
    });
    await ops.getByTestId('budget-api_key-main').waitFor();
    await ops.getByTestId(`budget-scoped_token-${tokenId}`).waitFor();
    expect(await budgetsOf(accountId)).toEqual([
      expect.objectContaining({ owner: 'main', period: 'day', limit_micro_dzd: '50000000' }),
      expect.objectContaining({ owner: tokenId, period: 'month', time_zone: 'Africa/Algiers' }),
    ]);
    await screenshots(ops, 'operator-account-budgets');

    await chat(key);
    // Settlement follows the answer: wait until billing counts it as spent, not reserved.
    const [spent] = await waitFor(
      async () => {
        const budgets = await budgetsOf(accountId);
        const settled =
          budgets[0]!.spent_micro_dzd !== '0' && budgets[0]!.reserved_micro_dzd === '0';
        return settled ? budgets : undefined;
      },
      30_000,
      'the request settled against the budget',
    );

    await open(owner, 'Usage');
    const bar = owner.getByTestId('budget-api_key-main');
    await expect(amountIn(bar.getByTestId('budget-spent'))).resolves.toBe(
      decimalOf(spent!.spent_micro_dzd),
    );
    await expect(amountIn(bar.getByTestId('budget-remaining'))).resolves.toBe(
      decimalOf(spent!.remaining_micro_dzd),
    );
    await bar.getByText(/^Resets /).waitFor();
    const percent = Number((BigInt(spent!.spent_micro_dzd) * 10_000n) / 50_000_000n) / 100;
    const spentBar = bar.getByRole('progressbar', { name: 'Spent' });
    await expect(spentBar.getAttribute('aria-valuenow')).resolves.toBe(String(percent));
    await owner.getByTestId(`budget-scoped_token-${tokenId}`).waitFor();
    await screenshots(owner, 'usage-budgets');

    await open(owner, 'API keys');
    const cell = owner.getByTestId('key-main').getByTestId('key-budget');
    await cell.getByText(/of DZD\s50\.00 per day$/).waitFor();
    // The owner caps the key to what it has spent: the next request does not fit.
    await cell.getByRole('button', { name: 'Edit budget' }).click();
    const dialog = owner.getByRole('dialog');
    await expect(dialog.getByLabel('Limit (DZD)').inputValue()).resolves.toBe('50');
    await dialog.getByLabel('Limit (DZD)').fill(decimalOf(spent!.spent_micro_dzd));
    await dialog.getByRole('button', { name: 'Save budget' }).click();
    await dialog.waitFor({ state: 'detached' });
    await screenshots(owner, 'api-keys-budget');
    await expect(refusal(key)).resolves.toEqual({ status: 402, code: 'budget_exhausted' });
    await open(owner, 'Usage');
    // A new window started with the change: nothing spent in it, nothing left of the cap.
    await expect(
      amountIn(owner.getByTestId('budget-api_key-main').getByTestId('budget-spent')),
    ).resolves.toBe('0.00');

    await ops.reload();
    for (const name of ['main', tokenId]) {
      const row = ops.getByTestId(
        name === 'main' ? 'budget-api_key-main' : `budget-scoped_token-${name}`,
      );
      await row.getByRole('button', { name: 'Remove' }).click();
      await ops.getByRole('dialog').getByRole('button', { name: 'Remove budget' }).click();
      await row.waitFor({ state: 'detached' });
    }
    await ops.getByText('No budgets').waitFor();
    await expect(budgetsOf(accountId)).resolves.toEqual([]);
    await chat(key);
  }, 120_000);

  it('finance reads budgets without controls; the server refuses a change', async () => {
    const { accountId } = await ownerWithKey('budget-read');
    await adminCall('PUT', `/accounts/${accountId}/api-keys/main/budget`, {
      limit_dzd: 10,
      period: 'week',
    });
    const finance = await operatorViewer('budget-fin@gateway.test', 'finance');
    await finance.goto(`/dashboard/operator/accounts/${accountId}`);
    await finance.getByTestId('budget-api_key-main').waitFor();
    await expect(finance.getByRole('button', { name: 'Set a budget' }).count()).resolves.toBe(0);
    await expect(finance.getByRole('button', { name: 'Remove' }).count()).resolves.toBe(0);
    const put = await probe(
      finance,
      'PUT',
      `/dashboard/api/operator/accounts/${accountId}/api-keys/main/budget`,
      { limit_dzd: 1, period: 'day' },
    );
    expect(put.status).toBe(403);
  });
});
