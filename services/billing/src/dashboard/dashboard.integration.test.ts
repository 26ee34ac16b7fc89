import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { createTestDatabase, fundAccount } from '@gateway/testing';
import { billingDatabaseTemplate, createPrismaClient } from '../db/client.js';
import {
  startBillingApi,
  type BillingApiUnderTest,
  putChatModel,
} from '../http/billing-api.suite.js';
import { createDashboard } from './index.js';
import { hashPassword, verifyPassword } from './passwords.js';

/** Billing's side of the dashboard: passwords, invitations, sessions, the overview. */

let billing: BillingApiUnderTest;
const PASSWORD = 'a long enough password';

beforeAll(async () => {
  billing = await startBillingApi();
});

afterAll(async () => {
  await billing?.close();
});

async function newAccount(): Promise<string> {
  return (await billing.call('post', '/admin/accounts').send({ name: 'dash' })).body.id as string;
}

async function invitationToken(accountId: string, email: string): Promise<string> {
  const invited = await billing.call('post', `/admin/accounts/${accountId}/invitations`).send({
    email,
  });
  expect(invited.status).toBe(201);
  return invited.body.token as string;
}

describe('passwords', () => {
  it('are scrypt hashes with their parameters and a random salt, checked exactly', async () => {
    const [one, two] = [await hashPassword(PASSWORD), await hashPassword(PASSWORD)];
    expect(one).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/);
    expect(one).not.toBe(two);
    expect(await verifyPassword(PASSWORD, one)).toBe(true);
    expect(await verifyPassword(`${PASSWORD} `, one)).toBe(false);
    expect(await verifyPassword(PASSWORD, null)).toBe(false);
    expect(await verifyPassword(PASSWORD, 'md5$abc')).toBe(false);
    // Stronger parameters later still verify the old hashes: each hash carries its own.
    const cheap = await hashPassword(PASSWORD, { N: 2 ** 10, r: 8, p: 1 });
    expect(await verifyPassword(PASSWORD, cheap)).toBe(true);
  });
});

describe('invitations', () => {
  it('is used once even when accepted twice at the same time', async () => {
    const token = await invitationToken(await newAccount(), 'race@example.com');
    const accept = () =>
      billing.call('post', '/dashboard/invitations/accept').send({ token, password: PASSWORD });
    const statuses = (await Promise.all([accept(), accept(), accept()])).map((r) => r.status);
    expect(statuses.sort()).toEqual([201, 400, 400]);
  });

  it('sets a new password on a second invitation and ends the older sessions', async () => {
    const accountId = await newAccount();
    const first = await billing
      .call('post', '/dashboard/invitations/accept')
      .send({ token: await invitationToken(accountId, 'again@example.com'), password: PASSWORD });
    const oldSession = first.body.token as string;
    expect(
      (await billing.call('post', '/dashboard/sessions/resolve').send({ token: oldSession }))
        .status,
    ).toBe(200);
    await billing.call('post', '/dashboard/invitations/accept').send({
      token: await invitationToken(accountId, 'again@example.com'),
      password: 'the new password, longer',
    });
    const resolved = await billing
      .call('post', '/dashboard/sessions/resolve')
      .send({ token: oldSession });
    expect(resolved.body.error.code).toBe('session_required');
    const oldPassword = await billing
      .call('post', '/dashboard/sessions')
      .send({ email: 'again@example.com', password: PASSWORD });
    expect(oldPassword.body.error.code).toBe('invalid_credentials');
  });

  it('refuses an email that owns another account, and an unknown account', async () => {
    const email = 'taken@example.com';
    const token = await invitationToken(await newAccount(), email);
    await billing.call('post', '/dashboard/invitations/accept').send({ token, password: PASSWORD });
    const other = await billing
      .call('post', `/admin/accounts/${await newAccount()}/invitations`)
      .send({ email: 'TAKEN@example.com' });
    expect(other.status).toBe(409);
    const nobody = await billing
      .call('post', '/admin/accounts/usr_aaaaaaaaaaaaaaaaaaaa/invitations')
      .send({ email: 'x@example.com' });
    expect(nobody.status).toBe(404);
  });

  it('is refused after its expiry', async () => {
    const db = await createTestDatabase(billingDatabaseTemplate);
    const prisma = createPrismaClient(db.runtimeUrl, { maxConnections: 2 });
    try {
      let nowMs = Date.parse('2030-01-01T00:00:00Z');
      const dashboard = createDashboard({
        prisma,
        clock: () => new Date(nowMs),
        invitationTtlMs: 3_600_000,
      });
      await prisma.account.create({ data: { id: 'usr_expiryexpiryexpiry', name: 'e' } });
      const invitation = await dashboard.users.invite('usr_expiryexpiryexpiry', 'late@example.com');
      nowMs += 3_600_000;
      const error = await dashboard.users.accept(invitation.token, PASSWORD).catch((e) => e);
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).code).toBe('invalid_invitation');
      expect(await dashboard.users.purgeExpiredInvitations()).toBe(1);
    } finally {
      await prisma.$disconnect();
      await db.drop();
    }
  });
});

describe('the dashboard calls', () => {
  it("are edge's alone: the worker's credential is refused", async () => {
    const answer = await billing
      .call('post', '/dashboard/sessions', 'worker')
      .send({ email: 'x@example.com', password: PASSWORD });
    expect(answer.status).toBe(403);
  });

  it('give the overview with the spend of settled requests today and this month', async () => {
    const { accountId, apiKey: key } = await fundAccount(billing.operator, {
      name: 'dash',
      keyName: 'auto',
      credit: { idempotencyKey: 'overview-topup', reference: 'wire' },
    });
    await putChatModel(billing, {
      id: 'acme/overview',
      inputPriceDzdPerM: 100,
      outputPriceDzdPerM: 300,
      maxOutputTokens: 1000,
    });
    const admitted = await billing.call('post', '/admissions').send({
      authorization: `Bearer ${key}`,
      holdId: `chatcmpl-${accountId}`,
      model: 'acme/overview',
      estimate: { inputTokens: 1000, maxOutputTokens: 500, choices: 1 },
      priority: false,
    });
    expect(admitted.status).toBe(200);
    const pending = await billing.call('get', `/dashboard/accounts/${accountId}/overview`);
    expect(pending.body).toMatchObject({
      balance_dzd: 10,
      reserved_dzd: 0.25,
      available_dzd: 9.75,
    });
    await billing
      .call('post', `/holds/chatcmpl-${accountId}/settle`, 'worker')
      .send({ inputTokens: 1000, outputTokens: 100 });
    const overview = await billing.call('get', `/dashboard/accounts/${accountId}/overview`);
    // (1000 × 100 + 100 × 300) / 10^6 DZD = 0.13 DZD; the credit is not spend.
    expect(overview.body).toEqual({
      account: { id: accountId, name: 'dash', status: 'active' },
      currency: 'DZD',
      balance_dzd: 9.87,
      reserved_dzd: 0,
      available_dzd: 9.87,
      spend_today_dzd: 0.13,
      spend_month_dzd: 0.13,
      as_of: expect.any(String),
    });
  });
});
