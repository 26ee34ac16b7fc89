import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import OpenAI from 'openai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHAT_MODEL, startAbuseStack, type AbuseStack } from '../abuse/abuse-stack.js';
import { waitFor } from '../support/worker-harness.js';
import { VIEWPORTS, launchChromium, newViewer, screenshots } from './browser.js';

/*
 * The dashboard in a real browser (Debian's Chromium) against the deployed shape: billing, the
 * dispatcher, the worker and edge as processes over real PostgreSQL and RabbitMQ, a stand-in
 * model node. Edge serves the built app at /dashboard/ and its API at /dashboard/api. Every
 * main page is photographed at desktop and phone width into .artifacts/dashboard/.
 */

const PASSWORD = 'correct horse battery staple';
const OPERATOR = { email: 'ops@gateway.test', password: 'operator password 1', role: 'operator' };

let stack: AbuseStack;
let browser: Browser;
const opened: { context: BrowserContext; problems: string[] }[] = [];

beforeAll(async () => {
  stack = await startAbuseStack({
    // The browser reaches edge on http://127.0.0.1: no `Secure` cookie there.
    edgeEnv: { DASHBOARD_INSECURE_LOOPBACK_COOKIE: 'true' },
  });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

/** Every page of the test ran without a console error or CSP violation. */
afterEach(async () => {
  const problems = opened.flatMap((viewer) => viewer.problems);
  await Promise.all(opened.splice(0).map((viewer) => viewer.context.close()));
  expect(problems).toEqual([]);
});

async function adminCall<T = Record<string, unknown>>(
  method: string,
  route: string,
  body?: unknown,
): Promise<T> {
  const answer = await stack.admin(method, route, body);
  if (answer.status >= 300) throw new Error(`${method} ${route}: ${answer.status} ${answer.body}`);
  return JSON.parse(answer.body) as T;
}

async function viewer(): Promise<Page> {
  const created = await newViewer(browser, stack.edgeUrl);
  opened.push(created);
  return created.page;
}

/** A new account and its owner's invitation link (what an operator hands out). */
async function invitedOwner(
  name: string,
): Promise<{ accountId: string; email: string; url: string }> {
  const account = await adminCall<{ id: string }>('POST', '/accounts', { name });
  const email = `${name}@customer.test`;
  const invitation = await adminCall<{ url: string }>(
    'POST',
    `/accounts/${account.id}/invitations`,
    { email },
  );
  return { accountId: account.id, email, url: invitation.url };
}

async function acceptInvitation(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel(/^New password/).fill(PASSWORD);
  await page.getByLabel(/^Repeat the password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

async function signIn(page: Page, email: string, password: string, realm = 'Account owner') {
  await page.goto('/dashboard/signin');
  await page.getByText(realm, { exact: true }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

const amountOf = (page: Page, stat: string) =>
  page.getByTestId(`stat-${stat}`).getByTestId('amount');

/** The raw key in the "shown once" dialog, then the dialog closed. */
async function takeShownKey(page: Page): Promise<string> {
  const key = (await page.getByTestId('secret-value').textContent())!.trim();
  await page.getByRole('button', { name: 'Done, I stored it' }).click();
  await page.getByTestId('secret-value').waitFor({ state: 'detached' });
  return key;
}

async function chat(apiKey: string) {
  const client = new OpenAI({ baseURL: `${stack.edgeUrl}/v1`, apiKey, maxRetries: 0 });
  return client.chat.completions.create({
    model: CHAT_MODEL,
    messages: [{ role: 'user', content: 'Hello from the browser test' }],
  });
}

async function refusal(apiKey: string): Promise<{ status?: number; code?: unknown }> {
  try {
    await chat(apiKey);
    return {};
  } catch (error) {
    const { status, code } = error as { status?: number; code?: unknown };
    return { status, code };
  }
}

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

    await adminCall('POST', '/operator-users', OPERATOR);
    const ops = await viewer();
    await signIn(ops, OPERATOR.email, OPERATOR.password, 'Operator');
    await ops.getByRole('heading', { name: 'Accounts' }).waitFor();
    await ops.getByRole('link', { name: 'credited-owner' }).waitFor();
    await screenshots(ops, 'operator-accounts');
    await ops.getByLabel('Search accounts').fill('credited');
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

    const probe = (method: string, path: string, body?: unknown, csrf = true) =>
      page.evaluate(
        async ({ method, path, body, csrf }) => {
          const session = (await (await fetch('/dashboard/api/session')).json()) as {
            csrf_token: string;
          };
          const response = await fetch(path, {
            method,
            credentials: 'same-origin',
            headers: {
              'Content-Type': 'application/json',
              ...(csrf ? { 'X-CSRF-Token': session.csrf_token } : {}),
              'Idempotency-Key': crypto.randomUUID(),
            },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          return { status: response.status, text: await response.text() };
        },
        { method, path, body, csrf },
      );
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
      const answer = await probe(method, path, body);
      expect({ path, status: answer.status }).toEqual({ path, status: 403 });
      expect(answer.text).not.toContain(theirs.accountId);
    }
    // The account comes from the session: a foreign id in the query or body is not obeyed.
    const overview = await probe('GET', `/dashboard/api/overview?account_id=${other}`);
    expect(JSON.parse(overview.text).account.id).toBe(mine.accountId);
    const keys = await probe('GET', `/dashboard/api/api-keys?account_id=${other}`);
    expect(keys.text).not.toContain('secret-b');
    const deleted = await probe('DELETE', `/dashboard/api/api-keys/secret-b?account_id=${other}`);
    expect(deleted.status).toBe(404);
    // A state change without the session's CSRF token is refused.
    const forged = await probe('POST', '/dashboard/api/api-keys', { name: 'forged' }, false);
    expect(forged.status).toBe(403);
    expect(JSON.parse(forged.text).error.code).toBe('csrf_failed');

    // The session cookie is out of the page's reach and never sent cross-site.
    const cookies = await page.context().cookies();
    const session = cookies.find((cookie) => cookie.name === 'gw_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  });
});
