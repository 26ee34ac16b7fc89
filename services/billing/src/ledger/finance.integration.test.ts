import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { decodeCursor, encodeCursor } from './cursor.js';
import { csvField, csvRow, csvTextField } from './csv.js';
import { microDzdToFixedDzd } from './money-format.js';
import type { LedgerEntryView } from './types.js';
import {
  DZD,
  MODEL,
  admitHold,
  admittableEstimate,
  createLedgerHarness,
  expectedCost,
  type LedgerHarness,
} from './ledger-test-support.suite.js';

const HOUR = 60 * 60 * 1000;

let h: LedgerHarness;

beforeAll(async () => {
  h = await createLedgerHarness({ maxConnections: 6 });
});

afterAll(async () => {
  await h?.finish();
});

describe('formatting helpers', () => {
  it('renders DZD with exactly 6 decimals', () => {
    expect(microDzdToFixedDzd(0n)).toBe('0.000000');
    expect(microDzdToFixedDzd(12_500_000n)).toBe('12.500000');
    expect(microDzdToFixedDzd(-42n)).toBe('-0.000042');
    expect(microDzdToFixedDzd(-1_000_001n)).toBe('-1.000001');
    expect(microDzdToFixedDzd(9007199254740993n)).toBe('9007199254.740993');
  });

  it('quotes CSV fields per RFC 4180 and defuses spreadsheet formulas', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\r\nlines')).toBe('"two\r\nlines"');
    expect(csvTextField(null)).toBe('');
    expect(csvTextField('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
    expect(csvTextField('-5')).toBe("'-5");
    expect(csvRow(['a', 'b'])).toBe('a,b\r\n');
  });

  it('round-trips cursors and refuses forged ones', () => {
    const cursor = { createdAt: new Date('2026-03-01T08:00:00.123Z'), id: 9007199254740993n };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    for (const bad of ['', 'abc', Buffer.from('1.x').toString('base64url'), 'A'.repeat(100)]) {
      expect(() => decodeCursor(bad)).toThrow(GatewayError);
    }
  });
});

describe('statement', () => {
  it('gives opening balance, lines with running balance, closing balance, and CSV', async () => {
    const accountId = await h.createAccount('Statement SARL');
    const t0 = h.clock.now();
    await h.ledger.credit({ accountId, amountMicroDzd: 100n * DZD, reference: 'wire, March' });
    h.clock.advance(HOUR);
    const hold = await admitHold(h, { accountId, amountMicroDzd: 2n * DZD });
    const settled = await h.ledger.settleHold(hold.id, { inputTokens: 1234, outputTokens: 567 });
    expect(settled.costMicroDzd).toBe(expectedCost(1234n, 567n));
    h.clock.advance(HOUR);
    const credit = await h.ledger.credit({
      accountId,
      amountMicroDzd: 500_001n,
      reference: '=HYPERLINK("evil") "quoted"',
    });
    // A hold still pending is not posted: it is not on the statement.
    // (At priority no prompt's worst case at MODEL's prices is exactly 1 DZD: the nearest below.)
    await admitHold(h, {
      accountId,
      amountMicroDzd: admittableEstimate(DZD, true).amountMicroDzd,
      priority: true,
    });
    h.clock.advance(HOUR);
    await h.ledger.credit({ accountId, amountMicroDzd: 7n * DZD, reference: 'after the period' });

    const from = new Date(t0.getTime() + HOUR / 2);
    const to = new Date(t0.getTime() + 2.5 * HOUR);
    const statement = await h.ledger.statement(accountId, { from, to });
    const cost = settled.costMicroDzd;
    expect(statement).toMatchObject({
      accountId,
      from,
      to,
      openingBalanceMicroDzd: 100n * DZD,
      totalCreditsMicroDzd: 500_001n,
      totalDebitsMicroDzd: cost,
      closingBalanceMicroDzd: 100n * DZD - cost + 500_001n,
    });
    expect(statement.lines).toEqual([
      expect.objectContaining({
        transactionId: settled.transactionId,
        kind: 'hold_settlement',
        holdId: hold.id,
        reference: `${MODEL}: 1234 in + 567 out tokens`,
        amountMicroDzd: -cost,
        balanceAfterMicroDzd: 100n * DZD - cost,
        createdAt: new Date(t0.getTime() + HOUR),
      }),
      expect.objectContaining({
        transactionId: credit.transactionId,
        kind: 'credit',
        holdId: null,
        amountMicroDzd: 500_001n,
        balanceAfterMicroDzd: 100n * DZD - cost + 500_001n,
      }),
    ]);

    const csv = await h.ledger.statementCsv(accountId, { from, to });
    const [settleLine, creditLine] = statement.lines;
    const closing = microDzdToFixedDzd(statement.closingBalanceMicroDzd);
    expect(csv).toBe(
      'date,entry_id,transaction_id,kind,hold_id,reference,amount_dzd,balance_dzd\r\n' +
        `${from.toISOString()},,,opening_balance,,,,100.000000\r\n` +
        `${settleLine!.createdAt.toISOString()},${settleLine!.entryId},${settled.transactionId},` +
        `hold_settlement,${hold.id},${MODEL}: 1234 in + 567 out tokens,` +
        `${microDzdToFixedDzd(-cost)},${microDzdToFixedDzd(100n * DZD - cost)}\r\n` +
        `${creditLine!.createdAt.toISOString()},${creditLine!.entryId},${credit.transactionId},` +
        `credit,,"'=HYPERLINK(""evil"") ""quoted""",0.500001,${closing}\r\n` +
        `${to.toISOString()},,,closing_balance,,,,${closing}\r\n`,
    );

    // The whole history: opening 0, closing = the posted balance.
    const everything = await h.ledger.statement(accountId, {
      from: new Date(0),
      to: new Date(h.clock.now().getTime() + 1),
    });
    expect(everything.openingBalanceMicroDzd).toBe(0n);
    expect(everything.lines).toHaveLength(4);
    expect(everything.closingBalanceMicroDzd).toBe(
      (await h.ledger.getBalance(accountId)).balanceMicroDzd,
    );
  });

  it('refuses unknown accounts, reversed ranges and oversized statements', async () => {
    const range = { from: new Date(0), to: h.clock.now() };
    await expect(h.ledger.statement('usr_missing', range)).rejects.toMatchObject({
      code: 'resource_not_found',
    });
    const accountId = await h.fundedAccount(DZD);
    await expect(
      h.ledger.statement(accountId, { from: range.to, to: range.from }),
    ).rejects.toMatchObject({ code: 'invalid_request_body' });
    const small = h.replica({ statementMaxLines: 0 });
    await expect(
      small.statement(accountId, { from: range.from, to: new Date(range.to.getTime() + 1) }),
    ).rejects.toMatchObject({ code: 'invalid_request_body', message: /shorter period/ });
    const empty = await h.ledger.statement(accountId, { from: new Date(0), to: new Date(1) });
    expect(empty).toMatchObject({ openingBalanceMicroDzd: 0n, closingBalanceMicroDzd: 0n });
    expect(empty.lines).toEqual([]);
  });
});

describe('listEntries', () => {
  async function allPages(query: { accountId?: string; ledgerAccount?: string; limit: number }) {
    const pages: LedgerEntryView[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await h.ledger.listEntries({ ...query, ...(cursor ? { cursor } : {}) });
      pages.push(page.entries);
      if (!page.nextCursor) return pages;
      cursor = page.nextCursor;
    }
  }

  it('pages through every entry once, in (time, id) order, with filters', async () => {
    const accountId = await h.createAccount('Paging EURL');
    for (let i = 1; i <= 11; i += 1) {
      await h.ledger.credit({ accountId, amountMicroDzd: BigInt(i) * DZD, reference: `c${i}` });
      if (i % 3 === 0) h.clock.advance(1000);
    }
    const hold = await admitHold(h, { accountId, amountMicroDzd: DZD });
    await h.ledger.settleHold(hold.id, { inputTokens: 10, outputTokens: 10 });
    h.clock.advance(1);

    const customerPages = await allPages({ accountId, limit: 5 });
    expect(customerPages.map((p) => p.length)).toEqual([5, 5, 2]);
    const customer = customerPages.flat();
    expect(customer.every((e) => e.ledgerAccount === `customer:${accountId}`)).toBe(true);
    expect(customer.map((e) => e.amountMicroDzd)).toEqual([
      ...Array.from({ length: 11 }, (_, i) => BigInt(i + 1) * DZD),
      -expectedCost(10n, 10n),
    ]);

    const everything = (await allPages({ limit: 7 })).flat();
    const ids = everything.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    const sorted = [...everything].sort((a, b) =>
      a.createdAt.getTime() !== b.createdAt.getTime()
        ? a.createdAt.getTime() - b.createdAt.getTime()
        : Number(a.id - b.id),
    );
    expect(everything).toEqual(sorted);
    expect(everything.length).toBe(await h.prisma.ledgerEntry.count());
    expect(everything.reduce((sum, e) => sum + e.amountMicroDzd, 0n)).toBe(0n);

    const revenue = (await allPages({ ledgerAccount: 'system:revenue', limit: 500 })).flat();
    expect(revenue.length).toBeGreaterThan(0);
    expect(revenue.every((e) => e.ledgerAccount === 'system:revenue' && e.accountId === null)).toBe(
      true,
    );

    const windowed = await h.ledger.listEntries({
      accountId,
      from: customer[3]!.createdAt,
      to: customer[6]!.createdAt,
    });
    expect(windowed.entries.map((e) => e.id)).toEqual(
      customer
        .filter(
          (e) => e.createdAt >= customer[3]!.createdAt && e.createdAt < customer[6]!.createdAt,
        )
        .map((e) => e.id),
    );
  });

  it('lists only entries past the stability window, and later pages pick up new ones', async () => {
    const stable = h.replica({ entriesStableAfterMs: 30_000 });
    const accountId = await h.createAccount('Horizon SPA');
    await h.ledger.credit({ accountId, amountMicroDzd: DZD, reference: 'first' });
    const early = await stable.listEntries({ accountId });
    expect(early.entries).toEqual([]);
    expect(early.through).toEqual(new Date(h.clock.now().getTime() - 30_000));
    h.clock.advance(30_001);
    const page = await stable.listEntries({ accountId, limit: 1 });
    expect(page.entries).toHaveLength(1);
    expect(page.nextCursor).toBeNull();
    await h.ledger.credit({ accountId, amountMicroDzd: 2n * DZD, reference: 'second' });
    h.clock.advance(30_001);
    const next = await stable.listEntries({
      accountId,
      limit: 1,
      cursor: encodeCursor(page.entries[0]!),
    });
    expect(next.entries.map((e) => e.amountMicroDzd)).toEqual([2n * DZD]);
  });

  it('validates limit and cursor', async () => {
    await expect(h.ledger.listEntries({ limit: 501 })).rejects.toMatchObject({
      code: 'invalid_request_body',
      param: 'limit',
    });
    await expect(h.ledger.listEntries({ limit: 0 })).rejects.toMatchObject({ param: 'limit' });
    await expect(h.ledger.listEntries({ cursor: 'nope' })).rejects.toMatchObject({
      param: 'cursor',
    });
    expect((await h.ledger.listEntries({ limit: 500 })).entries.length).toBeLessThanOrEqual(500);
  });
});

describe('checkInvariants', () => {
  /** Breaks one thing behind the ledger's back, checks it is reported, then repairs it. */
  async function expectReported(
    breakIt: () => Promise<unknown>,
    repair: () => Promise<unknown>,
    pattern: RegExp,
  ) {
    await breakIt();
    try {
      const report = await h.ledger.checkInvariants();
      expect(report.ok).toBe(false);
      expect(report.violations.some((line) => pattern.test(line))).toBe(true);
    } finally {
      await repair();
    }
    expect((await h.ledger.checkInvariants()).violations).toEqual([]);
  }

  it('reports projections, holds and token counters that disagree with the ledger', async () => {
    const accountId = await h.fundedAccount(10n * DZD);
    const tokenId = await h.createToken(accountId, null);
    const hold = await admitHold(h, { accountId, amountMicroDzd: DZD, tokenId });
    const balanceRow = { where: { accountId } };
    await expectReported(
      () =>
        h.prisma.accountBalance.update({
          ...balanceRow,
          data: { postedCreditsMicroDzd: { increment: 1n } },
        }),
      () =>
        h.prisma.accountBalance.update({
          ...balanceRow,
          data: { postedCreditsMicroDzd: { decrement: 1n } },
        }),
      new RegExp(`account ${accountId}: projection credits 10000001`),
    );
    await expectReported(
      () => h.prisma.accountBalance.update({ ...balanceRow, data: { pendingMicroDzd: 0n } }),
      () => h.prisma.accountBalance.update({ ...balanceRow, data: { pendingMicroDzd: DZD } }),
      /pending holds 1000000/,
    );
    await expectReported(
      () => h.prisma.scopedToken.update({ where: { id: tokenId }, data: { reservedMicroDzd: 0n } }),
      () =>
        h.prisma.scopedToken.update({ where: { id: tokenId }, data: { reservedMicroDzd: DZD } }),
      new RegExp(`scoped token ${tokenId}: reserved 0`),
    );
    await expectReported(
      () =>
        h.prisma.hold.update({
          where: { id: hold.id },
          data: { status: 'settled', settledAmountMicroDzd: 5n, finalizedAt: new Date() },
        }),
      // The fake settlement wrote no usage record: a settled hold's is written by the
      // settlement function, not by the status change.
      () =>
        h.prisma.hold.update({
          where: { id: hold.id },
          data: { status: 'pending', settledAmountMicroDzd: null, finalizedAt: null },
        }),
      new RegExp(`hold ${hold.id} is settled without a settlement transaction`),
    );
    await h.ledger.voidHold(hold.id);
  });
});
