import { describe, expect, it } from '@jest/globals';
import { waitFor } from '@gateway/testing';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { pgPoolOf } from '../db/client.js';
import { newId } from '../identity/secrets.js';
import { DZD, admitHold, useLedgerHarness } from './ledger-test-support.suite.js';

/*
 * ledger_settle_pending_holds: a batch of pending holds settled set-based (one statement per
 * table) must leave exactly what ledger_settle_holds' loop leaves, item by item: the answers (the
 * balance after each item included), the journal, the balances, the token and the usage records.
 * The loop is made to run by adding a hold that does not exist: such a batch is not the common
 * case, and the loop settles the rest and reports that one as not found.
 */

const harness = useLedgerHarness();

/** Every hold's amount: a worst case reachable exactly with and without priority. */
const HOLD = 120_000n;

const SETTLE = 'SELECT * FROM usage_settle_holds($1, $2, $3, $4, now(), $5, $6, $7, $8)';

interface Item {
  holdId: string;
  inputTokens: bigint;
  outputTokens: bigint;
}

/** Two accounts, one with a scoped token; priority, capped and zero-cost items among them. */
async function arrange(run: string) {
  const h = harness();
  const first = await h.fundedAccount(100n * DZD);
  const second = await h.fundedAccount(100n * DZD);
  const token = await h.createToken(first, 50n * DZD);
  const shapes = [
    { accountId: first, priority: false, usage: [10n, 20n] },
    { accountId: second, priority: true, usage: [300n, 7n] },
    { accountId: first, priority: true, usage: [1n, 1n] },
    { accountId: first, tokenId: token, priority: false, usage: [50n, 0n] },
    // Far more than the hold: charged the hold, the difference recorded.
    { accountId: second, priority: false, usage: [10_000_000n, 0n] },
    { accountId: first, tokenId: token, priority: true, usage: [0n, 0n] },
    { accountId: second, priority: false, usage: [3n, 4n] },
  ];
  const labels = new Map([
    [first, 'first'],
    [second, 'second'],
    [token, 'token'],
  ]);
  const items: Item[] = [];
  for (const [k, shape] of shapes.entries()) {
    const holdId = `hold_${run}_${String(k).padStart(2, '0')}`;
    await admitHold(h, { ...shape, amountMicroDzd: HOLD, holdId });
    items.push({ holdId, inputTokens: shape.usage[0]!, outputTokens: shape.usage[1]! });
  }
  // Not the holds' order: the answers come back by position whatever the order settled in.
  items.reverse();
  return { labels, items, accounts: [first, second], token };
}

async function settle(items: Item[], extraHoldIds: string[] = []) {
  const holdIds = [...items.map((item) => item.holdId), ...extraHoldIds];
  const each = <T>(value: T) => holdIds.map(() => value);
  const { rows } = await pgPoolOf(harness().prisma).query<Record<string, unknown>>(SETTLE, [
    holdIds,
    [...items.map((item) => String(item.inputTokens)), ...extraHoldIds.map(() => '1')],
    [...items.map((item) => String(item.outputTokens)), ...extraHoldIds.map(() => '1')],
    holdIds.map(() => newId('txn')),
    each('5'),
    each(null),
    each('12'),
    each(false),
  ]);
  return rows;
}

/** What the batch left, with the run's ids replaced by labels. */
async function outcome(
  run: Awaited<ReturnType<typeof arrange>>,
  rows: Record<string, unknown>[],
  holdPrefix: string,
) {
  const label = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(label)
      : typeof value === 'string'
        ? [...run.labels].reduce(
            (text, [id, name]) => text.replaceAll(id, name),
            value.replace(holdPrefix, 'hold_'),
          )
        : value;
  const pool = pgPoolOf(harness().prisma);
  const holdIds = run.items.map((item) => item.holdId);
  const answers = rows
    .filter((row) => holdIds.includes(row.hold_id as string))
    .sort((a, b) => Number(a.ord) - Number(b.ord))
    .map((row) =>
      [
        'ord',
        'outcome',
        'hold_id',
        'account_id',
        'status',
        'model',
        'amount_micro_dzd',
        'cost_micro_dzd',
        'credits',
        'debits',
        'pending',
        'error_state',
      ].map((column) => label(row[column])),
    );
  const journal = await pool.query<Record<string, unknown>>(
    `SELECT t.hold_id, t.kind, t.account_id, t.reference,
            array_agg(e.ledger_account || ' ' || e.amount_micro_dzd ORDER BY e.ledger_account)
              AS legs
       FROM ledger_transactions t LEFT JOIN ledger_entries e ON e.transaction_id = t.id
      WHERE t.hold_id = ANY($1) GROUP BY t.id ORDER BY t.hold_id`,
    [holdIds],
  );
  const holds = await pool.query<Record<string, unknown>>(
    `SELECT id, status, settled_amount_micro_dzd, uncapped_cost_micro_dzd
       FROM holds WHERE id = ANY($1) ORDER BY id`,
    [holdIds],
  );
  const balances = await pool.query<Record<string, unknown>>(
    `SELECT account_id, posted_credits_micro_dzd, posted_debits_micro_dzd, pending_micro_dzd
       FROM account_balances WHERE account_id = ANY($1) ORDER BY posted_debits_micro_dzd`,
    [run.accounts],
  );
  const token = await pool.query<Record<string, unknown>>(
    'SELECT spent_micro_dzd, reserved_micro_dzd FROM scoped_tokens WHERE id = $1',
    [run.token],
  );
  const usage = await pool.query<Record<string, unknown>>(
    `SELECT hold_id, account_id, scoped_token_id IS NOT NULL AS by_token, hold_status, outcome,
            prompt_tokens, completion_tokens, reasoning_tokens, cost_micro_dzd,
            generation_latency_ms
       FROM usage_records WHERE hold_id = ANY($1) ORDER BY hold_id`,
    [holdIds],
  );
  const labelled = (result: { rows: Record<string, unknown>[] }) =>
    result.rows.map((row) => Object.values(row).map(label));
  return {
    answers,
    journal: labelled(journal),
    holds: labelled(holds),
    balances: labelled(balances),
    token: labelled(token),
    usage: labelled(usage),
  };
}

/** Journal transactions of the batch written by distinct (sub)transactions. */
async function writers(items: Item[]): Promise<number> {
  const { rows } = await pgPoolOf(harness().prisma).query<{ writers: number }>(
    `SELECT count(DISTINCT xmin::text)::int AS writers FROM ledger_transactions
      WHERE hold_id = ANY($1)`,
    [items.map((item) => item.holdId)],
  );
  return rows[0]!.writers;
}

describe('a batch of pending holds settled set-based', () => {
  it('leaves what the loop leaves, item by item, in one statement per table', async () => {
    const fast = await arrange('fast');
    const fastRows = await settle(fast.items);
    const slow = await arrange('slow');
    const missing = newId('hold');
    const slowRows = await settle(slow.items, [missing]);

    expect(slowRows.find((row) => row.hold_id === missing)?.outcome).toBe('not_found');
    // The loop writes each item in a subtransaction of its own; the set-based path, all at once.
    expect(await writers(slow.items)).toBe(slow.items.length);
    expect(await writers(fast.items)).toBe(1);

    const expected = await outcome(slow, slowRows, 'hold_slow_');
    expect(await outcome(fast, fastRows, 'hold_fast_')).toEqual(expected);
    // What is compared is not empty: every item settled, the capped one at its hold.
    expect(expected.answers.map((row) => row[1])).toEqual(Array(7).fill('settled'));
    expect(expected.holds.filter((row) => row[3] !== null)).toHaveLength(1);
    expect(expected.usage).toHaveLength(7);
  });

  it('an item that cannot settle sends the batch to the loop: the others still settle', async () => {
    const h = harness();
    const run = await arrange('broken');
    // The second account's pending amount no longer covers its holds (a CHECK refuses it below
    // zero): the set-based attempt fails as a whole, and the loop fails only that account's.
    await h.asOwner('UPDATE account_balances SET pending_micro_dzd = 0 WHERE account_id = $1', [
      run.accounts[1],
    ]);
    const rows = await settle(run.items);
    const byAccount = new Map<string, string[]>();
    for (const row of rows) {
      const name = run.labels.get(row.account_id as string)!;
      byAccount.set(name, [...(byAccount.get(name) ?? []), row.outcome as string]);
    }
    expect(byAccount.get('first')).toEqual(Array(4).fill('settled'));
    expect(byAccount.get('second')).toEqual(Array(3).fill('error'));
    // Put back what the holds reserve, so that the harness' invariants hold at the end.
    await h.asOwner(`UPDATE account_balances SET pending_micro_dzd = $2 WHERE account_id = $1`, [
      run.accounts[1],
      String(3n * HOLD),
    ]);
    for (const item of run.items) await h.ledger.voidHold(item.holdId).catch(() => undefined);
  });

  it('writes the journal before it locks the balance: an admission of the account goes on meanwhile', async () => {
    const h = harness();
    const accountId = await h.fundedAccount(100n * DZD);
    // The loop (the path a declined batch takes) settles in hold id order and locks the balance
    // at its first item: a wait on the last item's journal id would then hold the balance too,
    // so this test passes only on the set-based path, and only if it locks the balance last.
    const holdIds = [newId('hold'), newId('hold')].sort();
    for (const holdId of holdIds) await admitHold(h, { accountId, amountMicroDzd: HOLD, holdId });
    const txns = holdIds.map(() => newId('txn'));
    // Another transaction holds the last item's journal id, uncommitted: the settlement's
    // journal insert waits for it to end.
    const blocker = new pg.Client({ connectionString: h.databaseUrl });
    await blocker.connect();
    const timer = new AbortController();
    let settlement: Promise<{ rows: Record<string, unknown>[] }> | undefined;
    let admission: Promise<{ id: string }> | undefined;
    try {
      await blocker.query('BEGIN');
      await blocker.query(
        `INSERT INTO ledger_transactions (id, kind, account_id, reference)
         VALUES ($1, 'adjustment', $2, 'test: holds the id')`,
        [txns[1], accountId],
      );
      const blockerPid = (await blocker.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      settlement = pgPoolOf(h.prisma).query<Record<string, unknown>>(SETTLE, [
        holdIds,
        ['10', '10'],
        ['5', '5'],
        txns,
        ['5', '5'],
        [null, null],
        ['12', '12'],
        [false, false],
      ]);
      // Waiting for the blocker, and no other backend of the cluster's (other test files).
      await waitFor(
        async () =>
          (
            await blocker.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE $1 = ANY (pg_blocking_pids(pid)) AND query LIKE '%usage_settle_holds%'`,
              [blockerPid],
            )
          ).rows[0].n > 0,
        5_000,
        'the settlement to wait for the journal id',
      );
      // With the balance row locked before the journal, this admission would wait for the
      // blocker as well.
      admission = admitHold(h, { accountId, amountMicroDzd: HOLD });
      const admitted = await Promise.race([
        admission,
        // Cleared when the test ends either way (its rejection then is not a result).
        sleep(10_000, 'still waiting after 10 s', { signal: timer.signal }).catch(() => 'cleared'),
      ]);
      expect(admitted).toMatchObject({ status: 'pending', accountId });
      await blocker.query('ROLLBACK');
      const { rows } = await settlement;
      expect(rows.map((row) => [row.hold_id, row.outcome])).toEqual([
        [holdIds[0], 'settled'],
        [holdIds[1], 'settled'],
      ]);
      await h.ledger.voidHold((await admission).id);
    } finally {
      timer.abort();
      await blocker.end();
      await Promise.all([settlement, admission].map((work) => work?.catch(() => undefined)));
    }
  });
});
