import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import {
  DZD,
  admitHold,
  createLedgerHarness,
  type LedgerHarness,
} from './ledger-test-support.suite.js';

/*
 * Rounds are bounded in count and in time (on a machine shared with other work the
 * 50 rounds once took over a minute): as many as fit in the budget, at least the minimum. Each
 * round is the full race; more rounds only make a rare interleaving likelier to show.
 */
const ROUNDS_MAX = 50;
const ROUNDS_MIN = 10;
const BUDGET_MS = 30_000;
const CONTENDERS = 200;

let h: LedgerHarness;

beforeAll(async () => {
  h = await createLedgerHarness({ maxConnections: 20 });
});

afterAll(async () => {
  await h?.finish();
});

describe('race for the last dinar', () => {
  it(`${CONTENDERS} concurrent holds of 1 DZD on a 1 DZD balance: exactly one wins, ${ROUNDS_MIN} to ${ROUNDS_MAX} rounds`, async () => {
    let lowestAvailable = 1n * DZD;
    const startedMs = performance.now();
    let round = 0;
    for (; round < ROUNDS_MAX; round += 1) {
      if (round >= ROUNDS_MIN && performance.now() - startedMs > BUDGET_MS) break;
      const accountId = await h.fundedAccount(1n * DZD);
      let racing = true;
      // Watches the balance while the race runs: available never goes below zero.
      const watcher = (async () => {
        while (racing) {
          const { availableMicroDzd } = await h.ledger.getBalance(accountId);
          if (availableMicroDzd < lowestAvailable) lowestAvailable = availableMicroDzd;
        }
      })();
      const results = await Promise.allSettled(
        Array.from({ length: CONTENDERS }, () =>
          admitHold(h, { accountId, amountMicroDzd: 1n * DZD }),
        ),
      );
      racing = false;
      await watcher;

      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      for (const failure of lost) {
        expect(failure.reason).toBeInstanceOf(GatewayError);
        expect((failure.reason as GatewayError).code).toBe('insufficient_balance');
      }
      const balance = await h.ledger.getBalance(accountId);
      expect(balance.pendingMicroDzd).toBe(1n * DZD);
      expect(balance.availableMicroDzd).toBe(0n);
      expect(await h.prisma.hold.count({ where: { accountId } })).toBe(1);
      // Alternate the ending: settle half of the winners, void the others.
      const winner = (won[0] as PromiseFulfilledResult<{ id: string }>).value;
      if (round % 2 === 0)
        await h.ledger.settleHold(winner.id, { inputTokens: 10, outputTokens: 10 });
      else await h.ledger.voidHold(winner.id);
    }
    expect(round).toBeGreaterThanOrEqual(ROUNDS_MIN);
    expect(lowestAvailable).toBeGreaterThanOrEqual(0n);
  }, 180_000);
});
