import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import {
  ANY_AMOUNT_MODEL,
  DZD,
  HOLD_TTL_MS,
  admitHold,
  expectedCost,
  createLedgerHarness,
  type LedgerHarness,
} from './ledger-test-support.suite.js';

/**
 * A hold whose job was never published is released after the publish grace,
 * not its TTL; a published hold lives until its job's end, and the sweeper's release and the
 * publish mark (then the settlement) exclude each other on the hold row.
 */

const GRACE_MS = 30_000;
let h: LedgerHarness;

beforeAll(async () => {
  h = await createLedgerHarness({ holdPublishGraceMs: GRACE_MS });
});

afterAll(async () => {
  await h?.finish();
});

const admitOne = (accountId: string) => admitHold(h, { accountId, amountMicroDzd: DZD });

const usage = { inputTokens: 10, outputTokens: 5 };

it('releases a hold never published once the grace has passed, not before', async () => {
  const accountId = await h.fundedAccount(5n * DZD);
  const hold = await admitOne(accountId);
  const placedMs = h.clock.now().getTime();
  expect(await h.ledger.expireHolds(new Date(placedMs + GRACE_MS - 1))).toBe(0);
  expect(await h.ledger.expireHolds(new Date(placedMs + GRACE_MS))).toBe(1);
  expect((await h.ledger.getHold(hold.id))?.status).toBe('expired');
  expect((await h.ledger.getBalance(accountId)).availableMicroDzd).toBe(5n * DZD);
  // The edge that published late learns the hold is gone.
  expect(await h.markPublished(hold.id, new Date(placedMs + HOLD_TTL_MS))).toBe(false);
});

/*
 * The release is a guess: a mark held up past the grace (edge's path to billing slow or cut)
 * looks like a job never published, but the job ran. Its settlement is charged what the account
 * covers now, never more than its usage, the hold, or the room left under a limit.
 */
describe('a settlement of a hold released unpublished', () => {
  const release = async (hold: { id: string }) => {
    const pastGrace = new Date(h.clock.now().getTime() + GRACE_MS);
    await h.ledger.expireHolds(pastGrace);
    expect((await h.ledger.getHold(hold.id))?.status).toBe('expired');
  };

  it('charges its usage when the balance covers it, once, with its usage record', async () => {
    const accountId = await h.fundedAccount(5n * DZD);
    const hold = await admitOne(accountId);
    await release(hold);
    const settled = await h.ledger.settleHold(hold.id, usage);
    expect(settled.costMicroDzd).toBe(expectedCost(10n, 5n));
    const again = await h.ledger.settleHold(hold.id, usage);
    expect(again).toMatchObject({ replayed: true, costMicroDzd: settled.costMicroDzd });
    const balance = await h.ledger.getBalance(accountId);
    expect(balance).toMatchObject({
      pendingMicroDzd: 0n,
      balanceMicroDzd: 5n * DZD - settled.costMicroDzd,
    });
    const record = await h.prisma.usageRecord.findUniqueOrThrow({ where: { holdId: hold.id } });
    expect(record).toMatchObject({
      holdStatus: 'settled',
      outcome: 'succeeded',
      costMicroDzd: settled.costMicroDzd,
      promptTokens: 10n,
      completionTokens: 5n,
    });
  });

  it('charges no more than the balance left once later holds took the released amount', async () => {
    const accountId = await h.fundedAccount(DZD);
    const hold = await admitOne(accountId);
    await release(hold);
    // The released dinar is spent again, all but 7 µDZD, before the late settlement comes.
    const later = await admitHold(h, {
      accountId,
      amountMicroDzd: DZD - 7n,
      model: ANY_AMOUNT_MODEL,
    });
    const settled = await h.ledger.settleHold(hold.id, usage);
    expect(settled.costMicroDzd).toBe(7n);
    await h.ledger.voidHold(later.id);
    expect((await h.ledger.getBalance(accountId)).balanceMicroDzd).toBe(DZD - 7n);
  });

  it('refuses it once the hold was voided after the release (its owner gave up on the job)', async () => {
    const accountId = await h.fundedAccount(5n * DZD);
    const hold = await admitOne(accountId);
    await release(hold);
    // Edge's publish was not confirmed in time: it voids and answers the client an error.
    expect((await h.ledger.voidHold(hold.id)).status).toBe('expired');
    await expect(h.ledger.settleHold(hold.id, usage)).rejects.toBeInstanceOf(GatewayError);
    expect((await h.ledger.getBalance(accountId)).balanceMicroDzd).toBe(5n * DZD);
  });

  it("charges no more than the scoped token's spending limit leaves", async () => {
    const accountId = await h.fundedAccount(5n * DZD);
    const tokenId = await h.createToken(accountId, DZD + 3n);
    const hold = await admitHold(h, { accountId, tokenId, amountMicroDzd: DZD });
    await release(hold);
    const later = await admitHold(h, {
      accountId,
      tokenId,
      amountMicroDzd: DZD,
      model: ANY_AMOUNT_MODEL,
    });
    expect((await h.ledger.settleHold(hold.id, usage)).costMicroDzd).toBe(3n);
    await h.ledger.voidHold(later.id);
  });

  it('still refuses a hold that expired at its TTL after it was published, or was voided', async () => {
    const accountId = await h.fundedAccount(5n * DZD);
    const published = await admitOne(accountId);
    const placedMs = h.clock.now().getTime();
    expect(await h.markPublished(published.id, new Date(placedMs + HOLD_TTL_MS))).toBe(true);
    expect(await h.ledger.expireHolds(new Date(placedMs + HOLD_TTL_MS))).toBeGreaterThan(0);
    await expect(h.ledger.settleHold(published.id, usage)).rejects.toBeInstanceOf(GatewayError);
    const voided = await admitOne(accountId);
    await h.ledger.voidHold(voided.id);
    await expect(h.ledger.settleHold(voided.id, usage)).rejects.toBeInstanceOf(GatewayError);
    expect((await h.ledger.getBalance(accountId)).balanceMicroDzd).toBe(5n * DZD);
  });
});

it('keeps an unmarked hold past its grace while the sweeper has been awake less than a grace', async () => {
  const accountId = await h.fundedAccount(5n * DZD);
  const hold = await admitOne(accountId);
  const pastGrace = new Date(h.clock.now().getTime() + GRACE_MS);
  // Billing just resumed (restarted, or a stopped process continued): the hold's mark may be
  // on its way, so the hold waits until the sweeper has been awake a whole grace.
  expect(await h.ledger.expireHolds(pastGrace, GRACE_MS - 1)).toBe(0);
  expect((await h.ledger.getHold(hold.id))?.status).toBe('pending');
  expect(await h.ledger.expireHolds(pastGrace, GRACE_MS)).toBe(1);
  expect((await h.ledger.getHold(hold.id))?.status).toBe('expired');
});

it('keeps a published hold past the grace and its TTL until the expiry its job needs', async () => {
  const accountId = await h.fundedAccount(5n * DZD);
  const hold = await admitOne(accountId);
  const placedMs = h.clock.now().getTime();
  const jobEndMs = placedMs + 3 * HOLD_TTL_MS;
  expect(await h.markPublished(hold.id, new Date(jobEndMs))).toBe(true);
  expect(await h.ledger.expireHolds(new Date(placedMs + HOLD_TTL_MS + 1))).toBe(0);
  const settled = await h.ledger.settleHold(hold.id, usage);
  expect(settled.status).toBe('settled');
  // Settled once: the sweeper past the job's end and a second settlement change nothing.
  expect(await h.ledger.expireHolds(new Date(jobEndMs + 1))).toBe(0);
  const again = await h.ledger.settleHold(hold.id, usage);
  expect(again.costMicroDzd).toBe(settled.costMicroDzd);
  const balance = await h.ledger.getBalance(accountId);
  expect(balance.pendingMicroDzd).toBe(0n);
  expect(balance.balanceMicroDzd).toBe(5n * DZD - settled.costMicroDzd);
});

it('a publish racing the sweeper at the grace: each hold is released or kept, never both', async () => {
  const accountId = await h.fundedAccount(100n * DZD);
  const holds = await Promise.all(Array.from({ length: 40 }, () => admitOne(accountId)));
  const atGrace = new Date(h.clock.now().getTime() + GRACE_MS);
  const farMs = atGrace.getTime() + 10 * HOLD_TTL_MS;
  const [published, released] = await Promise.all([
    Promise.all(holds.map((hold) => h.markPublished(hold.id, new Date(farMs)))),
    h.ledger.expireHolds(atGrace),
  ]);
  expect(published.filter((ok) => !ok)).toHaveLength(released);
  let settledMicroDzd = 0n;
  for (const [index, hold] of holds.entries()) {
    const status = (await h.ledger.getHold(hold.id))?.status;
    expect(status).toBe(published[index] ? 'pending' : 'expired');
    if (published[index]) {
      settledMicroDzd += (await h.ledger.settleHold(hold.id, usage)).costMicroDzd;
    }
  }
  const balance = await h.ledger.getBalance(accountId);
  expect(balance.pendingMicroDzd).toBe(0n);
  expect(balance.balanceMicroDzd).toBe(100n * DZD - settledMicroDzd);
});
