import { describe, expect, it } from '@jest/globals';
import { waitFor } from '@gateway/testing';
import { VIEWPORTS, screenshots } from './browser.js';
import {
  PASSWORD,
  acceptInvitation,
  adminCall,
  amountOf,
  chat,
  invitedOwner,
  operatorViewer,
  probe,
  refusal,
  signIn,
  takeShownKey,
  useDashboardStack,
  viewer,
} from './dashboard-harness.js';

/*
 * The dashboard in a real browser (Debian's Chromium) against the deployed shape: billing, the
 * dispatcher, the worker and edge as processes over real PostgreSQL and RabbitMQ, a stand-in
 * model node. Edge serves the built app at /dashboard/ and its API at /dashboard/api. Every
 * main page is photographed at desktop and phone width into .artifacts/dashboard/.
 */

useDashboardStack();

describe('dashboard in Chromium', () => {
  it('sign-in renders and a wrong password shows the documented error', async () => {
    const page = await viewer();
    await page.goto('/dashboard/');
    // No session: the app sends the visitor to sign-in.
    await page.waitForURL('**/dashboard/signin');
    await screenshots(page, 'sign-in');
    await signIn(page, 'nobody@customer.test', 'not the password');
    await expect(page.getByRole('alert').textContent()).resolves.toContain(
      'Wrong email or password.',
    );
    await screenshots(page, 'sign-in-error');
  });

  it('an owner signs in through an invitation, creates a key, uses it, regenerates and deletes it', async () => {
    const owner = await invitedOwner('keys-owner');
    await adminCall('POST', `/accounts/${owner.accountId}/credits`, {
      amount_dzd: 100,
      reference: 'browser test',
    });
    const page = await viewer();
    await page.goto(owner.url);
    await screenshots(page, 'invitation');
    await acceptInvitation(page, owner.url);
    // The fragment (the invitation token) is gone from the address bar.
    expect(page.url()).not.toContain('token=');
    await expect(amountOf(page, 'balance').textContent()).resolves.toMatch(/DZD\s100\.00/);
    await screenshots(page, 'overview');

    // On a phone the navigation hides behind the menu button.
    await page.setViewportSize(VIEWPORTS.phone);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByText('No API keys yet').waitFor();
    await page.setViewportSize(VIEWPORTS.desktop);
    await screenshots(page, 'api-keys-empty');
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.getByLabel('Name').fill('browser');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('secret-value').waitFor();
    await screenshots(page, 'api-key-created');
    const firstKey = await takeShownKey(page);
    const completion = await chat(firstKey);
    expect(completion.choices[0]!.message.content!.length).toBeGreaterThan(0);
    await page.getByTestId('key-browser').waitFor();
    await screenshots(page, 'api-keys');

    await page.getByTestId('key-browser').getByRole('button', { name: 'Regenerate' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Regenerate' }).click();
    await page.getByTestId('secret-value').waitFor();
    const secondKey = await takeShownKey(page);
    expect(secondKey).not.toBe(firstKey);
    await expect(refusal(firstKey)).resolves.toEqual({ status: 401, code: 'invalid_api_key' });
    await expect(chat(secondKey)).resolves.toBeDefined();

    await page.getByTestId('key-browser').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete key' }).click();
    await page.getByText('No API keys yet').waitFor();
    await expect(refusal(secondKey)).resolves.toEqual({ status: 401, code: 'invalid_api_key' });

    // The two completions were settled: the overview shows what they cost, to the micro-dinar.
    await page.getByRole('link', { name: 'Overview' }).click();
    const spent = await waitFor(
      async () => {
        await page.reload();
        const text = (await amountOf(page, 'spend-today').textContent()) ?? '';
        return /DZD\s0\.00$/.test(text) ? undefined : text;
      },
      15_000,
      "the overview's spend today",
    );
    expect(spent).toMatch(/^DZD\s0\.\d{2,6}$/);
    await screenshots(page, 'overview-after-use');

    // Sign out, and back in with the password chosen on the invitation.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/dashboard/signin');
    await signIn(page, owner.email, PASSWORD);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  });

  it('an operator credits an account and its owner sees the balance change', async () => {
    const owner = await invitedOwner('credited-owner');
    const ownerPage = await viewer();
    await acceptInvitation(ownerPage, owner.url);
    await expect(amountOf(ownerPage, 'balance').textContent()).resolves.toMatch(/DZD\s0\.00/);

    const ops = await operatorViewer('ops@gateway.test', 'operator');
    await ops.getByRole('link', { name: 'credited-owner' }).waitFor();
    await screenshots(ops, 'operator-accounts');
    // The search runs 250 ms after typing and its list replaces the one shown: clicking before
    // its answer came can land on the list as it is swapped (seen once in a loaded CI run).
    const searched = ops.waitForResponse(
      (response) => new URL(response.url()).searchParams.get('q') === 'credited' && response.ok(),
    );
    await ops.getByLabel('Search accounts').fill('credited');
    await searched;
    await ops.getByRole('link', { name: 'credited-owner' }).click();
    await ops.getByRole('heading', { name: 'credited-owner' }).waitFor();
    await ops.getByLabel('Amount (DZD)').fill('250.125');
    await ops.getByLabel('Reference').fill('wire 2026-11-24');
    await ops.getByRole('button', { name: 'Credit account' }).click();
    await expect(amountOf(ops, 'balance').textContent()).resolves.toBeDefined();
    await ops.getByText(/Credited\. Balance DZD\s250\.125/).waitFor();
    await screenshots(ops, 'operator-account');

    await ownerPage.reload();
    await ownerPage.getByRole('heading', { name: 'Overview' }).waitFor();
    await expect(amountOf(ownerPage, 'balance').textContent()).resolves.toMatch(/DZD\s250\.125/);
    await expect(amountOf(ownerPage, 'available').textContent()).resolves.toMatch(/DZD\s250\.125/);
  });

  it("an owner cannot reach another account's data by editing URLs or requests", async () => {
    const mine = await invitedOwner('owner-a');
    const theirs = await invitedOwner('owner-b');
    await adminCall('POST', `/accounts/${theirs.accountId}/api-keys`, { name: 'secret-b' });
    const page = await viewer();
    await acceptInvitation(page, mine.url);

    // The operator pages are not an owner's: the app sends them home.
    await page.goto(`/dashboard/operator/accounts/${theirs.accountId}`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(page.url()).toMatch(/\/dashboard\/?$/);

    const other = encodeURIComponent(theirs.accountId);
    for (const [method, path, body] of [
      ['GET', `/dashboard/api/operator/accounts/${other}`],
      ['GET', `/dashboard/api/operator/accounts?q=owner-b`],
      [
        'POST',
        `/dashboard/api/operator/accounts/${other}/credits`,
        { amount_dzd: 5, reference: 'x' },
      ],
      ['POST', `/dashboard/api/operator/accounts/${other}/invitations`, { email: 'x@y.test' }],
    ] as const) {
      const answer = await probe(page, method, path, body);
      expect({ path, status: answer.status }).toEqual({ path, status: 403 });
      expect(answer.text).not.toContain(theirs.accountId);
    }
    // The account comes from the session: a foreign id in the query or body is not obeyed.
    const overview = await probe(page, 'GET', `/dashboard/api/overview?account_id=${other}`);
    expect(JSON.parse(overview.text).account.id).toBe(mine.accountId);
    const keys = await probe(page, 'GET', `/dashboard/api/api-keys?account_id=${other}`);
    expect(keys.text).not.toContain('secret-b');
    const deleted = await probe(
      page,
      'DELETE',
      `/dashboard/api/api-keys/secret-b?account_id=${other}`,
    );
    expect(deleted.status).toBe(404);
    // A state change without the session's CSRF token is refused.
    const forged = await probe(page, 'POST', '/dashboard/api/api-keys', { name: 'forged' }, false);
    expect(forged.status).toBe(403);
    expect(JSON.parse(forged.text).error.code).toBe('csrf_failed');

    // The session cookie is out of the page's reach and never sent cross-site.
    const cookies = await page.context().cookies();
    const session = cookies.find((cookie) => cookie.name === 'gw_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  });
});
