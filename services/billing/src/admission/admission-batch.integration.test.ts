import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { pgPoolOf } from '../db/client.js';
import type { AdmissionItem, AdmissionResult, CredentialAdmitRequest } from './admission.js';
import {
  admitBatchStatement,
  NO_TOKEN,
  statementParams,
  type AdmitStatementParams,
} from '@gateway/ledger-calls';
import {
  fundedAccount,
  setUpIdentity,
  type IdentityHarness,
  putStandardChatModel,
} from '../identity/fixtures.suite.js';
import { sha256Hex } from '../identity/secrets.js';

/*
 * Admissions in batches (one statement, one transaction), against real PostgreSQL: each item's
 * own outcome, an account's items in their order, one lock order for concurrent batches, and a
 * batch whose statement fails retried item by item.
 */

let h: IdentityHarness;
const MODEL = 'org/batch-chat';
// 150 DZD per million input tokens, 600 per million output: 1 000 in + 500 out hold 0.45 DZD.
const HOLD_MICRO_DZD = 450_000n;

const request = (holdId: string, extra: Partial<CredentialAdmitRequest> = {}) => ({
  model: MODEL,
  estimate: { inputTokens: 1_000, maxOutputTokens: 500 },
  priority: false,
  holdId,
  ...extra,
});
const item = (key: string, holdId: string, extra: Partial<CredentialAdmitRequest> = {}) => ({
  authorization: `Bearer ${key}`,
  request: request(holdId, extra),
});
const outcomeOf = (result: AdmissionResult | undefined) => {
  if (!result) return 'missing';
  if (result.ok) return 'admitted';
  return result.error instanceof GatewayError ? result.error.code : 'failed';
};
const pending = async (accountId: string) =>
  (await h.prisma.accountBalance.findUniqueOrThrow({ where: { accountId } })).pendingMicroDzd;
const holdExists = async (id: string) =>
  (await h.sql.query('SELECT 1 FROM holds WHERE id = $1', [id])).rowCount === 1;

beforeAll(async () => {
  h = await setUpIdentity({ start: '2030-01-01T10:00:10Z' });
  await putStandardChatModel(h, MODEL);
});

afterAll(async () => {
  await h?.close();
});

describe('admissions in one transaction', () => {
  it('refuses exactly the item an account cannot pay for; its neighbours are admitted', async () => {
    const rich = await fundedAccount(h);
    const other = await fundedAccount(h);
    // 1 DZD: room for two holds of 0.45 DZD, not three.
    const poor = await fundedAccount(h, { creditDzd: 1n });
    const items: AdmissionItem[] = [
      item(rich.key, 'b1_rich_1'),
      item(poor.key, 'b1_poor_1'),
      item(other.key, 'b1_other_1'),
      item(poor.key, 'b1_poor_2'),
      item(`sk_live_${'A'.repeat(43)}`, 'b1_unknown'),
      item(rich.key, 'b1_rich_2'),
      item(poor.key, 'b1_poor_3'),
      item(other.key, 'b1_bad', { estimate: { inputTokens: -1, maxOutputTokens: 1 } }),
    ];
    const results = await h.identity.admission.admitMany(items);
    expect(results.map(outcomeOf)).toEqual([
      'admitted',
      'admitted',
      'admitted',
      'admitted',
      'invalid_api_key',
      'admitted',
      // The poor account's items in the order they came: the third is the one refused.
      'insufficient_balance',
      'invalid_request_body',
    ]);
    const first = results[0];
    expect(first?.ok && first.value.admission.hold).toMatchObject({
      id: 'b1_rich_1',
      amountMicroDzd: HOLD_MICRO_DZD,
    });
    expect(await pending(poor.accountId)).toBe(2n * HOLD_MICRO_DZD);
    expect(await pending(rich.accountId)).toBe(2n * HOLD_MICRO_DZD);
    expect(await holdExists('b1_poor_2')).toBe(true);
    expect(await holdExists('b1_poor_3')).toBe(false);
    // Every item of a known key counted against its account's window, the refused one too.
    const counts = await h.sql.query<{ account_id: string; count: number }>(
      'SELECT account_id, count FROM rate_limit_windows WHERE account_id = ANY($1)',
      [[rich.accountId, poor.accountId]],
    );
    expect(Object.fromEntries(counts.rows.map((row) => [row.account_id, row.count]))).toEqual({
      [rich.accountId]: 2,
      [poor.accountId]: 3,
    });
  });

  it('answers a retried batch from the holds it placed, placing nothing twice', async () => {
    const t = await fundedAccount(h);
    const items = [item(t.key, 'b2_1'), item(t.key, 'b2_2')];
    await h.identity.admission.admitMany(items);
    const again = await h.identity.admission.admitMany(items);
    expect(again.map((result) => result.ok && result.value.admission.hold.replayed)).toEqual([
      true,
      true,
    ]);
    expect(await pending(t.accountId)).toBe(2n * HOLD_MICRO_DZD);
  });

  it("answers an item repeating an earlier item's hold id from the hold that item placed", async () => {
    const t = await fundedAccount(h);
    const other = await fundedAccount(h);
    // One statement (no item-by-item retry behind it): the second item is the first's replay.
    const now = h.clock.now();
    const params = statementParams(
      { keyDigest: sha256Hex(t.key), token: NO_TOKEN },
      { ...request('b6_same'), estimate: { inputTokens: 1_000, maxOutputTokens: 500, choices: 1 } },
      { now, holdTtlMs: 60_000 },
    );
    const rows = await admitBatchStatement(pgPoolOf(h.prisma), [params, params]);
    expect(rows.map((row) => [row?.outcome, row?.hold_id])).toEqual([
      ['admitted', 'b6_same'],
      ['replayed', 'b6_same'],
    ]);
    expect(rows[1]?.hold_amount_micro_dzd).toBe(HOLD_MICRO_DZD.toString());
    expect(await pending(t.accountId)).toBe(HOLD_MICRO_DZD);
    // Two accounts naming one hold id: the first in the batch's order (by account) places it.
    const taken = await h.identity.admission.admitMany([
      item(t.key, 'b6_taken'),
      item(other.key, 'b6_taken'),
    ]);
    expect(taken.map(outcomeOf).sort()).toEqual(['admitted', 'conflict']);
    const pendings = [await pending(t.accountId), await pending(other.accountId)];
    expect(pendings.map((amount) => amount % HOLD_MICRO_DZD)).toEqual([0n, 0n]);
    expect(pendings[0]! + pendings[1]!).toBe(2n * HOLD_MICRO_DZD);
  });

  it('places one hold when retries of one admission race each other', async () => {
    const t = await fundedAccount(h);
    const second = h.newIdentity();
    const attempts = Array.from({ length: 12 }, (_, i) =>
      (i % 2 === 0 ? h.identity : second.identity).admission.admitMany([
        item(t.key, 'b9_raced'),
        item(t.key, `b9_other_${i}`),
      ]),
    );
    const results = (await Promise.all(attempts)).map(([raced]) => raced);
    expect(results.map(outcomeOf)).toEqual(Array.from({ length: 12 }, () => 'admitted'));
    const placed = results.filter((result) => result?.ok && !result.value.admission.hold.replayed);
    expect(placed).toHaveLength(1);
    expect(await pending(t.accountId)).toBe(13n * HOLD_MICRO_DZD);
  });

  it("counts a batch's items in their windows as if they came one by one", async () => {
    const t = await fundedAccount(h, { rateLimit: 3 });
    const limited = await fundedAccount(h);
    await h.sql.query('UPDATE api_keys SET requests_per_minute = 2 WHERE account_id = $1', [
      limited.accountId,
    ]);
    const results = await h.identity.admission.admitMany([
      item(t.key, 'b7_1'),
      item(limited.key, 'b7_k1'),
      item(t.key, 'b7_2'),
      item(limited.key, 'b7_k2'),
      item(t.key, 'b7_3'),
      item(limited.key, 'b7_k3'),
      item(t.key, 'b7_4'),
    ]);
    expect(results.map(outcomeOf)).toEqual([
      'admitted',
      'admitted',
      'admitted',
      'admitted',
      'admitted',
      'rate_limit_exceeded',
      'rate_limit_exceeded',
    ]);
    const windows = await h.sql.query<{ count: number }>(
      `SELECT count FROM rate_limit_windows WHERE account_id = $1
       UNION ALL
       SELECT w.count FROM key_request_windows w JOIN api_keys k ON k.id = w.owner_id
        WHERE k.account_id = $2`,
      [t.accountId, limited.accountId],
    );
    // The refused items counted too, in the account's window and in the key's.
    expect(windows.rows.map((row) => row.count)).toEqual([4, 3]);
  });

  it("leaves what an item refused after the balance step would have held to the account's next items", async () => {
    // 1 DZD: the two small items (0.45 DZD each) fit only if the large one holds nothing.
    const t = await fundedAccount(h, { creditDzd: 1n });
    await h.sql.query('UPDATE api_keys SET tokens_per_minute = 3000 WHERE account_id = $1', [
      t.accountId,
    ]);
    const results = await h.identity.admission.admitMany([
      // 2 600 + 500 tokens: over the key's tokens per minute (step 7); 0.69 DZD at most.
      item(t.key, 'b8_large', { estimate: { inputTokens: 2_600, maxOutputTokens: 500 } }),
      item(t.key, 'b8_1'),
      item(t.key, 'b8_2'),
    ]);
    expect(results.map(outcomeOf)).toEqual(['rate_limit_exceeded', 'admitted', 'admitted']);
    expect(await pending(t.accountId)).toBe(2n * HOLD_MICRO_DZD);
  });

  it('locks accounts in one order: batches naming them in opposite orders never deadlock', async () => {
    const accounts = await Promise.all(Array.from({ length: 8 }, () => fundedAccount(h)));
    const second = h.newIdentity();
    const pools = [pgPoolOf(h.prisma), pgPoolOf(second.prisma)];
    const now = h.clock.now();
    const params = (key: string, holdId: string): AdmitStatementParams =>
      statementParams(
        { keyDigest: sha256Hex(key), token: NO_TOKEN },
        { ...request(holdId), estimate: { inputTokens: 1_000, maxOutputTokens: 500, choices: 1 } },
        { now, holdTtlMs: 60_000 },
      );
    const rounds = 12;
    const batches = Array.from({ length: rounds }, (_, round) => {
      const forward = accounts.map((a, i) => params(a.key, `b3_f${round}_${i}`));
      const backward = [...accounts].reverse().map((a, i) => params(a.key, `b3_b${round}_${i}`));
      return [forward, backward] as const;
    });
    // A deadlock would fail a statement (40P01); each runs on its own pool, all at once.
    const rows = await Promise.all(
      batches.flatMap(([forward, backward]) => [
        admitBatchStatement(pools[0]!, forward),
        admitBatchStatement(pools[1]!, backward),
      ]),
    );
    const outcomes = rows.flat().map((row) => row?.outcome);
    expect(outcomes).toHaveLength(rounds * 2 * accounts.length);
    expect(new Set(outcomes)).toEqual(new Set(['admitted']));
    for (const a of accounts) {
      expect(await pending(a.accountId)).toBe(BigInt(rounds * 2) * HOLD_MICRO_DZD);
    }
  });

  it('retries a failed statement item by item: only the failing item fails', async () => {
    const a = await fundedAccount(h);
    const b = await fundedAccount(h);
    // A fault in one item's hold insert (the owner's connection installs it for this test).
    await h.sql.query(`
      CREATE FUNCTION test_poison_hold() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.id = 'b4_poison' THEN RAISE EXCEPTION 'injected fault'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_poison_hold BEFORE INSERT ON holds
        FOR EACH ROW EXECUTE FUNCTION test_poison_hold();`);
    try {
      const results = await h.identity.admission.admitMany([
        item(a.key, 'b4_a'),
        item(a.key, 'b4_poison'),
        item(b.key, 'b4_b'),
      ]);
      expect(results.map(outcomeOf)).toEqual(['admitted', 'failed', 'admitted']);
      const failed = results[1];
      expect(failed?.ok === false && String(failed.error)).toContain('injected fault');
      expect(await pending(a.accountId)).toBe(HOLD_MICRO_DZD);
      expect(await holdExists('b4_b')).toBe(true);
    } finally {
      await h.sql.query(
        'DROP TRIGGER test_poison_hold ON holds; DROP FUNCTION test_poison_hold();',
      );
    }
  });
});
