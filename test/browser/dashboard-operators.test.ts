import { describe, expect, it } from '@jest/globals';
import { screenshots } from './browser.js';
import {
  acceptInvitation,
  adminCall,
  signIn,
  takeShownKey,
  useDashboardStack,
  viewer,
} from './dashboard-harness.js';

/*
 * The operators' console in Chromium against the real stack: creating an account and inviting
 * its owner (role `operator`; finance sees no button), and the usage page across accounts.
 */

useDashboardStack();

/** An operator user of `role`, signed in on a fresh viewer at the Accounts page. */
async function operatorViewer(email: string, role: 'operator' | 'finance') {
  const password = `${role} password for ${email}`;
  await adminCall('POST', '/operator-users', { email, password, role });
  const page = await viewer();
  await signIn(page, email, password, 'Operator');
  await page.getByRole('heading', { name: 'Accounts' }).waitFor();
  return page;
}

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
