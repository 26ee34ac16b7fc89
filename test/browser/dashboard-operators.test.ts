import { describe, expect, it } from '@jest/globals';
import { CHAT_MODEL } from '../abuse/abuse-stack.js';
import { waitFor } from '@gateway/testing';
import { screenshots } from './browser.js';
import {
  acceptInvitation,
  adminCall,
  chat,
  download,
  open,
  operatorViewer,
  reloadLoaded,
  takeShownKey,
  useDashboardStack,
  viewer,
} from './dashboard-harness.js';

/*
 * The operators' console in Chromium against the real stack: creating an account and inviting
 * its owner (role `operator`; finance sees no button), and the usage page across accounts.
 */

const { stack } = useDashboardStack();

describe('dashboard operators, accounts', () => {
  it('creates an account from the console and invites its owner, who signs in', async () => {
    const page = await operatorViewer('creator@gateway.test', 'operator');
    await page.getByRole('button', { name: 'New account' }).click();
    await page.getByLabel('Account name').fill('Oasis Analytics');
    await screenshots(page, 'operator-new-account');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Oasis Analytics' }).waitFor();
    expect(page.url()).toMatch(/\/dashboard\/operator\/accounts\/[^/]+$/);

    await page.getByLabel("Owner's email").fill('owner@oasis.test');
    await page.getByRole('button', { name: 'Create invitation link' }).click();
    const link = await takeShownKey(page);
    expect(link).toMatch(/\/dashboard\/invitation#token=/);
    const owner = await viewer();
    await acceptInvitation(owner, link);

    const finance = await operatorViewer('reader@gateway.test', 'finance');
    await finance.getByText('Oasis Analytics').waitFor();
    await expect(finance.getByRole('button', { name: 'New account' }).count()).resolves.toBe(0);
  });
});

describe('dashboard operators, usage', () => {
  it('shows usage across accounts and of one account, per day, model and key, with the log as CSV', async () => {
    const other = await adminCall<{ id: string }>('POST', '/accounts', { name: 'usage-other' });
    await adminCall('POST', `/accounts/${other.id}/credits`, {
      amount_dzd: 100,
      reference: 'credit usage-other',
    });
    const { key } = await adminCall<{ key: string }>('POST', `/accounts/${other.id}/api-keys`, {
      name: 'other-key',
    });
    await chat(key);
    await chat(stack().apiKey);

    const page = await operatorViewer('usage@gateway.test', 'finance');
    await open(page, 'Usage');
    // A request is counted when its hold ends, just after the answer.
    await waitFor(
      async () => {
        await reloadLoaded(page, page.getByRole('heading', { name: 'Requests' }));
        return (await page.getByTestId('request-row').count()) >= 2 || undefined;
      },
      20_000,
      'both accounts in the request log',
    );
    const log = (await page.getByTestId('request-row').allTextContents()).join('\n');
    expect(log).toContain(other.id);
    expect(log).toContain(stack().accountId);
    await page.locator('.recharts-bar-rectangle >> visible=true').first().waitFor();
    await screenshots(page, 'operator-usage');
    await page.getByText('Per key', { exact: true }).click();
    await page.getByText(`${other.id} · other-key`).waitFor();
    await page.getByText('Per model', { exact: true }).click();
    await page.getByText(`${other.id} · ${CHAT_MODEL}`).waitFor();

    const csv = await download(page, 'Download CSV');
    expect(csv).toContain(other.id);
    expect(csv).toContain(stack().accountId);

    await page.getByLabel('Filter by account id').fill(other.id);
    await waitFor(
      async () => (await page.getByTestId('request-row').count()) === 1 || undefined,
      10_000,
      "only the filtered account's request",
    );
    expect(await page.getByTestId('request-row').textContent()).toContain(other.id);
    await screenshots(page, 'operator-usage-filtered');
    const filtered = await download(page, 'Download CSV');
    expect(filtered).toContain(other.id);
    expect(filtered).not.toContain(stack().accountId);
  });
});
