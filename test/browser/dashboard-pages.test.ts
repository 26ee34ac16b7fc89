import { describe, expect, it } from '@jest/globals';
import { CHAT_MODEL } from '../abuse/abuse-stack.js';
import { waitFor } from '@gateway/testing';
import { screenshots } from './browser.js';
import {
  adminCall,
  chat,
  respond,
  download,
  open,
  operatorViewer,
  ownerWithKey,
  probe,
  refusal,
  reloadLoaded,
  takeShownKey,
  useDashboardStack,
} from './dashboard-harness.js';

/*
 * The dashboard's second part in Chromium against the real stack: scoped tokens, webhooks,
 * usage and the statement for owners; the catalog, the ledger and account controls for
 * operators, and the finance role reading only. Screenshots of every page (desktop and phone)
 * into .artifacts/dashboard/.
 *
 * The rotated webhook secret's two signatures on the next delivery are asserted in
 * dashboard-webhooks.test.ts (a TLS receiver the dispatcher trusts); here the UI shows the
 * previous secret's window end.
 */

useDashboardStack();

describe('dashboard pages, owners', () => {
  it('creates a scoped token (shown once), and revoking it refuses the next call', async () => {
    const { page } = await ownerWithKey('tokens-owner');
    await open(page, 'Scoped tokens');
    await page.getByText('No scoped tokens yet').waitFor();
    await screenshots(page, 'scoped-tokens-empty');

    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByPlaceholder('Pick a key').click();
    await page.getByRole('option', { name: 'main' }).click();
    await page.getByLabel('Spending limit (DZD)').fill('2.5');
    await screenshots(page, 'scoped-token-form');
    await page.getByRole('dialog').getByRole('button', { name: 'Create token' }).click();
    await page.getByTestId('secret-value').waitFor();
    const token = await takeShownKey(page);
    expect(token).toMatch(/^jwt:/);
    await expect(chat(token)).resolves.toBeDefined();

    const row = page.locator('[data-testid^="token-tok_"]');
    await expect(row.getByTestId('token-state').textContent()).resolves.toBe('valid');
    await expect(row.textContent()).resolves.toMatch(/DZD\s2\.50/);
    await screenshots(page, 'scoped-tokens');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke token' }).click();
    await waitFor(
      async () => (await row.getByTestId('token-state').textContent()) === 'revoked',
      10_000,
      'the revoked state',
    );
    await expect(refusal(token)).resolves.toEqual({ status: 401, code: 'token_revoked' });
  });

  it('reveals, rotates (the previous window end shown) and sets the webhook format', async () => {
    const { page } = await ownerWithKey('hooks-owner');
    await open(page, 'Webhooks');
    await page.getByText('No deliveries yet').waitFor();
    await expect(page.getByTestId('revealed-secret').count()).resolves.toBe(0);
    await screenshots(page, 'webhooks');
    await page.getByRole('button', { name: 'Reveal' }).click();
    await expect(page.getByTestId('revealed-secret').first().textContent()).resolves.toMatch(
      /^whsec_/,
    );
    await page.getByRole('button', { name: 'Hide' }).click();
    await page.getByTestId('revealed-secret').first().waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Rotate' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
    const windowEnd = await page.getByTestId('previous-expires-at').textContent();
    expect(windowEnd).toMatch(/\d{4}/);
    await expect(page.getByTestId('secret-value').textContent()).resolves.toMatch(/^whsec_/);
    await screenshots(page, 'webhooks-rotated');
    await page.getByRole('button', { name: 'Done, I stored it' }).click();
    // Two secrets sign now: the new one (current) and the previous one until the window ends.
    await waitFor(
      async () => (await page.locator('[data-testid^="secret-whs_"]').count()) === 2,
      10_000,
      'two secrets',
    );
    await expect(page.getByText(windowEnd!, { exact: true }).count()).resolves.toBe(1);

    await page.getByText('Format B').click();
    await page.getByText('Format saved.').waitFor();
    await page.reload();
    await expect(page.getByRole('radio', { name: 'Format B' }).isChecked()).resolves.toBe(true);
  });

  it('shows API requests in the chart, the per-day/model/key totals, the request log and CSVs', async () => {
    const { page, key } = await ownerWithKey('usage-owner');
    await page.getByText('No usage yet').waitFor();
    for (let i = 0; i < 2; i++) await chat(key);
    await respond(key);

    // The records are written when each request's hold is settled (asynchronously).
    await open(page, 'Usage');
    await waitFor(
      async () => {
        await reloadLoaded(page, page.getByRole('heading', { name: 'Requests' }));
        return (await page.getByTestId('request-row').count()) === 3 || undefined;
      },
      30_000,
      'three requests in the log',
    );
    const rows = page.getByTestId('request-row');
    await expect(rows.first().textContent()).resolves.toContain(CHAT_MODEL);
    await expect(rows.first().textContent()).resolves.toContain('succeeded');
    // The Responses API request (the newest) is stored; the chat completions are not.
    await expect(rows.first().getByTestId('stored-badge').count()).resolves.toBe(1);
    await expect(page.getByTestId('stored-badge').count()).resolves.toBe(1);
    await expect(page.getByTestId('usage-group').first().textContent()).resolves.toMatch(/^.+3/);
    await page.getByText('Per model', { exact: true }).click();
    await page.getByTestId('usage-group').getByText(CHAT_MODEL).waitFor();
    await page.getByText('Per key', { exact: true }).click();
    await page.getByTestId('usage-group').getByText('main').waitFor();
    await page.locator('.recharts-bar-rectangle >> visible=true').first().waitFor();
    await screenshots(page, 'usage');
    const csv = (await download(page, 'Download CSV')).trim().split('\r\n');
    expect(csv).toHaveLength(4);
    expect(csv[1]).toContain(CHAT_MODEL);

    await open(page, 'Statement');
    await waitFor(
      async () => (await page.getByTestId('statement-line').count()) === 4 || undefined,
      10_000,
      'a credit and three settlements',
    );
    await screenshots(page, 'statement');
    const statement = await download(page, 'Download CSV');
    expect(statement).toContain('credit usage-owner');

    await open(page, 'Overview');
    await page
      .getByTestId('usage-chart')
      .locator('.recharts-bar-rectangle >> visible=true')
      .first()
      .waitFor();
    await page.getByText('Tokens', { exact: true }).click();
    await page.getByRole('heading', { name: 'Tokens per day' }).waitFor();
    await screenshots(page, 'overview-usage');
  });
});

/** The chat model as the operator API (`GET /admin/v1/models`) answers it. */
async function catalogModel(): Promise<Record<string, unknown> | undefined> {
  const { models } = await adminCall<{ models: { id: string }[] }>('GET', '/models');
  return models.find((entry) => entry.id === CHAT_MODEL);
}

describe('dashboard pages, operators', () => {
  it('an operator sees and edits the catalog, the ledger check and account controls', async () => {
    const { accountId, key } = await ownerWithKey('controlled-owner');
    await chat(key); // the worker then reports its node healthy
    const page = await operatorViewer('ops2@gateway.test', 'operator');

    await open(page, 'Catalog');
    const model = page.getByTestId(`model-${CHAT_MODEL}`);
    await expect(model.textContent()).resolves.toMatch(/DZD\s1,000\.00/);
    const healthy = async () => {
      await page.reload();
      await model
        .getByText(/^(healthy|down|unknown)$/)
        .first()
        .waitFor();
      return (await model.getByText('healthy', { exact: true }).count()) > 0 || undefined;
    };
    await waitFor(healthy, 15_000, 'node health badge');
    await expect(model.textContent()).resolves.toMatch(/observed \d+ s ago/);
    await screenshots(page, 'operator-catalog');
    await expect(model.getByTestId('model-modalities').textContent()).resolves.toBe('text');

    // Images on: the operator API answers the model with them, the defaults for the rest.
    const dialog = page.getByRole('dialog');
    await model.getByRole('button', { name: 'Edit' }).click();
    await dialog.getByRole('checkbox', { name: 'Image', exact: true }).check();
    await screenshots(page, 'operator-catalog-edit');
    await dialog.getByRole('button', { name: 'Save model' }).click();
    await page.getByText(`${CHAT_MODEL} saved.`).waitFor();
    await dialog.waitFor({ state: 'detached' });
    await expect(model.getByTestId('model-modalities').textContent()).resolves.toBe('textimage');
    await screenshots(page, 'operator-catalog-media');
    await expect(catalogModel()).resolves.toMatchObject({
      input_modalities: ['text', 'image'],
      image_tokens: 1445,
      remote_images: false,
    });

    // A price edit afterwards keeps them (PUT replaces the model: the page sends them back).
    await model.getByRole('button', { name: 'Edit' }).click();
    await expect(
      dialog.getByRole('checkbox', { name: 'Image', exact: true }).isChecked(),
    ).resolves.toBe(true);
    await dialog.getByLabel('Input price (DZD per million tokens)').fill('1200.5');
    await dialog.getByRole('button', { name: 'Save model' }).click();
    await dialog.waitFor({ state: 'detached' });
    await waitFor(
      async () => /DZD\s1,200\.50/.test((await model.textContent()) ?? '') || undefined,
      10_000,
      'the new price',
    );
    await expect(catalogModel()).resolves.toMatchObject({
      input_price_dzd_per_m: 1200.5,
      input_modalities: ['text', 'image'],
      image_tokens: 1445,
      remote_images: false,
    });

    await open(page, 'Ledger');
    await page.getByText('All invariants hold').waitFor();
    // Billing lists entries once they are past its safety delay (no page skips a late commit).
    await waitFor(
      async () => {
        await reloadLoaded(page, page.getByTestId('ledger-check'));
        return (await page.getByTestId('ledger-entry').count()) > 0 || undefined;
      },
      45_000,
      'ledger entries',
    );
    await screenshots(page, 'operator-ledger');

    await page.goto(`/dashboard/operator/accounts/${accountId}`);
    await page.getByRole('heading', { name: 'controlled-owner' }).waitFor();
    await page.getByTestId('statement-line').first().waitFor();
    await screenshots(page, 'operator-account-detail');
    // Every request of the account has ended: nothing is reserved.
    await page.getByRole('tab', { name: 'Open holds' }).click();
    await page.getByText('No open holds').waitFor();
    await page.getByRole('tab', { name: 'Webhook deliveries' }).click();
    await page.getByText('No deliveries yet').waitFor();
    await page.getByRole('button', { name: 'Suspend account' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Suspend' }).click();
    await page.getByRole('button', { name: 'Unsuspend account' }).waitFor();
    const suspended = await adminCall<{ status: string }>('GET', `/accounts/${accountId}`);
    expect(suspended.status).toBe('suspended');
    await page.getByRole('button', { name: 'Unsuspend account' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Unsuspend' }).click();
    await page.getByRole('button', { name: 'Suspend account' }).waitFor();
    await page.getByLabel('Rate limit (requests per minute)').fill('42');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('42 req / min').waitFor();
  });

  it('finance reads the catalog and the ledger check but cannot edit', async () => {
    const page = await operatorViewer('fin@gateway.test', 'finance');
    await open(page, 'Catalog');
    await page.getByTestId(`model-${CHAT_MODEL}`).waitFor();
    await page.getByText('Your role reads only.', { exact: false }).waitFor();
    await expect(page.getByRole('button', { name: 'Edit' }).count()).resolves.toBe(0);
    await screenshots(page, 'finance-catalog');
    await open(page, 'Ledger');
    await page.getByText('All invariants hold').waitFor();
    // The server refuses a write whatever the page shows.
    const put = await probe(page, 'PUT', '/dashboard/api/operator/models/x/y', {});
    expect(put.status).toBe(403);
  });
});
