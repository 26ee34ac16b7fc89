import { describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import type { KeyRateLimitList } from '@gateway/contracts';
import { CHAT_MODEL } from '../abuse/abuse-stack.js';
import { screenshots } from './browser.js';
import {
  adminCall,
  chat,
  open,
  operatorViewer,
  ownerWithKey,
  probe,
  useDashboardStack,
} from './dashboard-harness.js';

/*
 * Per-key rate limits in the dashboard, in Chromium against the real stack:
 * an operator sets a key's requests per minute on the account's page, the key is refused 429
 * once it made that many requests in the minute (its limit in `X-RateLimit-Limit`), the owner
 * sees the limit on the API keys page and removes it, and the next request passes.
 */

const { stack } = useDashboardStack();

const KEY_LIMIT_RPM = 3;

const limitsOf = async (accountId: string) =>
  (await adminCall<KeyRateLimitList>('GET', `/accounts/${accountId}/rate-limits`)).data;

/** Requests are counted in clock minutes: the burst below must not straddle two. */
async function awayFromMinuteBoundary(): Promise<void> {
  const leftMs = 60_000 - (Date.now() % 60_000);
  if (leftMs < 20_000) await new Promise((resolve) => setTimeout(resolve, leftMs + 100));
}

/** A chat request as any client sends it, with its status, headers and error. */
async function rawChat(apiKey: string) {
  const response = await fetch(`${stack().edgeUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'Hello' }] }),
  });
  const body = (await response.json()) as { error?: { code: string; message: string } };
  return { status: response.status, headers: response.headers, error: body.error };
}

/** Fills the "Set a rate limit" dialog on the operator's account page. */
async function setKeyLimit(page: Page, keyName: string, requestsPerMinute: number) {
  await page.getByRole('button', { name: 'Set a rate limit' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText('API key', { exact: true }).click();
  await dialog.getByLabel('Key name').fill(keyName);
  await dialog.getByLabel('Requests per minute').fill(String(requestsPerMinute));
  await dialog.getByRole('button', { name: 'Save rate limit' }).click();
  await dialog.waitFor({ state: 'detached' });
}

describe('dashboard rate limits', () => {
  it('an operator limits a key, the key is refused past it, the owner removes it', async () => {
    const { page: owner, key, accountId } = await ownerWithKey('limit-owner');
    const ops = await operatorViewer('limit-ops@gateway.test', 'operator');
    await ops.goto(`/dashboard/operator/accounts/${accountId}`);
    await ops.getByRole('heading', { name: 'limit-owner' }).waitFor();
    await ops.getByText('No key or token rate limits').waitFor();
    await setKeyLimit(ops, 'main', KEY_LIMIT_RPM);
    const row = ops.getByTestId('rate-limit-api_key-main');
    await expect(row.getByTestId('rpm').textContent()).resolves.toBe(String(KEY_LIMIT_RPM));
    await expect(row.getByTestId('tpm').textContent()).resolves.toBe('—');
    await expect(limitsOf(accountId)).resolves.toEqual([
      {
        object: 'rate_limit',
        applies_to: 'api_key',
        owner: 'main',
        requests_per_minute: KEY_LIMIT_RPM,
        tokens_per_minute: null,
      },
    ]);
    await screenshots(ops, 'operator-account-rate-limits');

    await awayFromMinuteBoundary();
    for (let sent = 0; sent < KEY_LIMIT_RPM; sent += 1) {
      const passed = await rawChat(key);
      expect(passed.status).toBe(200);
      expect(passed.headers.get('X-RateLimit-Limit')).toBe(String(KEY_LIMIT_RPM));
    }
    const refused = await rawChat(key);
    expect(refused.status).toBe(429);
    expect(refused.error).toMatchObject({
      code: 'rate_limit_exceeded',
      message: 'API key rate limit reached',
    });
    expect(refused.headers.get('X-RateLimit-Limit')).toBe(String(KEY_LIMIT_RPM));
    expect(refused.headers.get('X-RateLimit-Remaining')).toBe('0');

    await open(owner, 'API keys');
    const cell = owner.getByTestId('key-main').getByTestId('key-rate-limit');
    await cell.getByText(`${KEY_LIMIT_RPM} requests/min`, { exact: true }).waitFor();
    await screenshots(owner, 'api-keys-rate-limit');
    await cell.getByRole('button', { name: 'Remove rate limit' }).click();
    await owner.getByRole('dialog').getByRole('button', { name: 'Remove rate limit' }).click();
    await cell.getByText("Account's limit", { exact: true }).waitFor();
    await expect(limitsOf(accountId)).resolves.toEqual([]);
    // Still the same minute (and one request over the old limit): only the account's applies.
    await expect(chat(key)).resolves.toMatchObject({ object: 'chat.completion' });

    await ops.reload();
    await ops.getByText('No key or token rate limits').waitFor();
  }, 120_000);

  it("an operator reads a scoped token's id on the account's page and limits that token", async () => {
    const { key, accountId } = await ownerWithKey('limit-token');
    const issued = await fetch(`${stack().edgeUrl}/v1/scoped-jwt`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key_name: 'main', expires_delta: 3600 }),
    });
    expect(issued.status).toBe(200);
    const { token } = (await issued.json()) as { token: string };
    const keyInfo = await fetch(`${stack().edgeUrl}/v1/key`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const { scoped_token_id: tokenId } = (await keyInfo.json()) as { scoped_token_id: string };

    const ops = await operatorViewer('limit-token-ops@gateway.test', 'operator');
    await ops.goto(`/dashboard/operator/accounts/${accountId}`);
    const listed = ops.getByTestId(`scoped-token-${tokenId}`);
    await listed.waitFor();
    await expect(listed.getByRole('cell').allTextContents()).resolves.toEqual([
      tokenId,
      'main',
      'valid',
      expect.stringContaining('0'),
      expect.any(String),
    ]);
    // The id as shown is what the rate-limit dialog takes.
    const shownId = await listed.getByRole('cell').first().textContent();
    await ops.getByRole('button', { name: 'Set a rate limit' }).click();
    const dialog = ops.getByRole('dialog');
    await dialog.getByText('Scoped token', { exact: true }).click();
    await dialog.getByLabel('Token id').fill(shownId!);
    await dialog.getByLabel('Requests per minute').fill('7');
    await dialog.getByRole('button', { name: 'Save rate limit' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect(limitsOf(accountId)).resolves.toEqual([
      {
        object: 'rate_limit',
        applies_to: 'scoped_token',
        owner: tokenId,
        requests_per_minute: 7,
        tokens_per_minute: null,
      },
    ]);
  });

  it('finance reads rate limits without controls; the server refuses a change', async () => {
    const { accountId } = await ownerWithKey('limit-read');
    await adminCall('PUT', `/accounts/${accountId}/api-keys/main/rate-limit`, {
      tokens_per_minute: 20_000,
    });
    const finance = await operatorViewer('limit-fin@gateway.test', 'finance');
    await finance.goto(`/dashboard/operator/accounts/${accountId}`);
    const row = finance.getByTestId('rate-limit-api_key-main');
    await expect(row.getByTestId('tpm').textContent()).resolves.toBe('20,000');
    await expect(finance.getByRole('button', { name: 'Set a rate limit' }).count()).resolves.toBe(
      0,
    );
    await expect(row.getByRole('button').count()).resolves.toBe(0);
    const put = await probe(
      finance,
      'PUT',
      `/dashboard/api/operator/accounts/${accountId}/api-keys/main/rate-limit`,
      { requests_per_minute: 1 },
    );
    expect(put.status).toBe(403);
  });
});
