import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, expect } from '@jest/globals';
import OpenAI from 'openai';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { CHAT_MODEL, startAbuseStack, type AbuseStack } from '../abuse/abuse-stack.js';
import { launchChromium, newViewer } from './browser.js';

/*
 * What every dashboard browser test file shares: the deployed shape (billing, the dispatcher,
 * the worker and edge as processes over real PostgreSQL and RabbitMQ, a stand-in model node),
 * one Chromium, fresh profiles per viewer, and the steps of signing in. `useDashboardStack()`
 * registers the hooks in the calling file (each test file has its own stack).
 */

export const PASSWORD = 'correct horse battery staple';

let stack: AbuseStack;
let browser: Browser;
const opened: { context: BrowserContext; problems: string[] }[] = [];

/** `dispatcherEnv`: extra settings for the dispatcher (e.g. a test CA for a webhook receiver). */
export function useDashboardStack(options: { dispatcherEnv?: () => NodeJS.ProcessEnv } = {}): {
  stack: () => AbuseStack;
} {
  beforeAll(async () => {
    stack = await startAbuseStack({
      // The browser reaches edge on http://127.0.0.1: no `Secure` cookie there.
      // A webhook receiver on loopback (dashboard-webhooks.test.ts) needs edge's development
      // setting as well as the dispatcher's.
      edgeEnv: {
        DASHBOARD_INSECURE_LOOPBACK_COOKIE: 'true',
        WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      },
      dispatcherEnv: options.dispatcherEnv?.(),
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
  return { stack: () => stack };
}

export async function adminCall<T = Record<string, unknown>>(
  method: string,
  route: string,
  body?: unknown,
): Promise<T> {
  const answer = await stack.admin(method, route, body);
  if (answer.status >= 300) throw new Error(`${method} ${route}: ${answer.status} ${answer.body}`);
  return JSON.parse(answer.body) as T;
}

export async function viewer(): Promise<Page> {
  const created = await newViewer(browser, stack.edgeUrl);
  opened.push(created);
  return created.page;
}

/** A new account and its owner's invitation link (what an operator hands out). */
export async function invitedOwner(
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

export async function acceptInvitation(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel(/^New password/).fill(PASSWORD);
  await page.getByLabel(/^Repeat the password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

export async function signIn(page: Page, email: string, password: string, realm = 'Account owner') {
  await page.goto('/dashboard/signin');
  await page.getByText(realm, { exact: true }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** An operator user of `role`, signed in on a fresh viewer at the Accounts page. */
export async function operatorViewer(email: string, role: 'operator' | 'finance'): Promise<Page> {
  const password = `${role} password for ${email}`;
  await adminCall('POST', '/operator-users', { email, password, role });
  const page = await viewer();
  await signIn(page, email, password, 'Operator');
  await page.getByRole('heading', { name: 'Accounts' }).waitFor();
  return page;
}

/**
 * A request from inside the page, as its own script could send one: the session cookie goes
 * along, and the session's CSRF token unless `csrf` is false.
 */
export function probe(page: Page, method: string, path: string, body?: unknown, csrf = true) {
  return page.evaluate(
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
}

export const amountOf = (page: Page, stat: string) =>
  page.getByTestId(`stat-${stat}`).getByTestId('amount');

/** The raw key in the "shown once" dialog, then the dialog closed. */
export async function takeShownKey(page: Page): Promise<string> {
  const key = (await page.getByTestId('secret-value').textContent())!.trim();
  await page.getByRole('button', { name: 'Done, I stored it' }).click();
  await page.getByTestId('secret-value').waitFor({ state: 'detached' });
  return key;
}

export async function chat(apiKey: string) {
  const client = new OpenAI({ baseURL: `${stack.edgeUrl}/v1`, apiKey, maxRetries: 0 });
  return client.chat.completions.create({
    model: CHAT_MODEL,
    messages: [{ role: 'user', content: 'Hello from the browser test' }],
  });
}

/** A Responses API request (stored, the default): the request log marks it `stored`. */
export async function respond(apiKey: string) {
  const client = new OpenAI({ baseURL: `${stack.edgeUrl}/v1`, apiKey, maxRetries: 0 });
  return client.responses.create({ model: CHAT_MODEL, input: 'Hello from the browser test' });
}

export async function refusal(apiKey: string): Promise<{ status?: number; code?: unknown }> {
  try {
    await chat(apiKey);
    return {};
  } catch (error) {
    const { status, code } = error as { status?: number; code?: unknown };
    return { status, code };
  }
}

/** An owner signed in, credited, with an API key `main` (raw key returned). */
export async function ownerWithKey(
  name: string,
): Promise<{ page: Page; key: string; accountId: string }> {
  const owner = await invitedOwner(name);
  await adminCall('POST', `/accounts/${owner.accountId}/credits`, {
    amount_dzd: 100,
    reference: `credit ${name}`,
  });
  const { key } = await adminCall<{ key: string }>(
    'POST',
    `/accounts/${owner.accountId}/api-keys`,
    { name: 'main' },
  );
  const page = await viewer();
  await acceptInvitation(page, owner.url);
  return { page, key, accountId: owner.accountId };
}

export async function open(page: Page, link: string, heading = link): Promise<void> {
  await page.getByRole('navigation').getByRole('link', { name: link }).click();
  await page.getByRole('heading', { name: heading, level: 2 }).waitFor();
}

/**
 * Reloads the page and waits until `shown` is visible and no list on it is still loading, so
 * that what is counted next is the data and not a page still fetching it. (A count taken as
 * soon as the heading showed was 0 on every try once the API answered slower than the page
 * loaded: a busy machine, or a delay put on the route.)
 */
export async function reloadLoaded(page: Page, shown: Locator): Promise<void> {
  await page.reload();
  await shown.waitFor();
  await page.getByLabel('Loading').first().waitFor({ state: 'detached' });
}

/** The file behind a download link, as text. */
export async function download(page: Page, link: string): Promise<string> {
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: link }).first().click(),
  ]);
  return readFileSync((await file.path())!, 'utf8');
}
