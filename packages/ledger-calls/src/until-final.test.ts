import { GatewayError } from '@gateway/contracts';
import type { SettleInput, SettleOutcome } from './outcomes.js';
import { MAX_ATTEMPTS, retryStatement, settleUntilFinal } from './until-final.js';

const REQUEST = { holdId: 'hold_a', inputTokens: 10n, outputTokens: 5n };
const HOLD = {
  id: 'hold_a',
  accountId: 'usr_a',
  status: 'settled' as const,
  amountMicroDzd: 100n,
  settledAmountMicroDzd: 40n,
  expiresAt: new Date(0),
  model: 'acme/chat',
  finalizedAt: new Date(0),
};
const SETTLED: SettleOutcome = {
  outcome: 'settled',
  hold: HOLD,
  costMicroDzd: 40n,
  transactionId: 'txn_a',
  balance: null,
};
const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });

/** A submit that answers `answers` in turn and records what it was given. */
function submitting(...answers: (SettleOutcome | Error)[]) {
  const seen: SettleInput[] = [];
  const submit = async (request: SettleInput) => {
    seen.push(request);
    const answer = answers.shift();
    if (answer === undefined) throw new Error('submitted once too often');
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { submit, seen };
}

describe('settleUntilFinal', () => {
  it('tries again after a deadlock of the item, under a new transaction id', async () => {
    const { submit, seen } = submitting(
      { outcome: 'error', sqlState: '40P01', message: 'deadlock detected' },
      SETTLED,
    );
    await expect(settleUntilFinal(submit, REQUEST)).resolves.toBe(SETTLED);
    expect(seen).toHaveLength(2);
    expect(seen[0]!.transactionId).toMatch(/^txn_[a-z2-7]{20}$/);
    expect(seen[1]!.transactionId).not.toBe(seen[0]!.transactionId);
    expect(seen[1]).toMatchObject(REQUEST);
  });

  it('tries again after the whole statement deadlocked', async () => {
    const { submit, seen } = submitting(deadlock(), SETTLED);
    await expect(settleUntilFinal(submit, REQUEST)).resolves.toBe(SETTLED);
    expect(seen).toHaveLength(2);
  });

  it(`gives up after ${MAX_ATTEMPTS} attempts, with the item's SQLSTATE`, async () => {
    const failure = {
      outcome: 'error' as const,
      sqlState: '40001',
      message: 'could not serialize',
    };
    const { submit, seen } = submitting(failure, failure, failure);
    await expect(settleUntilFinal(submit, REQUEST)).rejects.toMatchObject({
      code: '40001',
      message: 'could not serialize',
    });
    expect(seen).toHaveLength(MAX_ATTEMPTS);
  });

  it('does not try again after an error that would fail again', async () => {
    const { submit, seen } = submitting(
      { outcome: 'error', sqlState: '22003', message: 'out of range' },
      SETTLED,
    );
    await expect(settleUntilFinal(submit, REQUEST)).rejects.toMatchObject({ code: '22003' });
    const refused = submitting(new GatewayError('conflict', 'no'));
    await expect(settleUntilFinal(refused.submit, REQUEST)).rejects.toBeInstanceOf(GatewayError);
    expect(seen).toHaveLength(1);
  });

  it('answers a final outcome that is not a settlement as it is', async () => {
    const conflict: SettleOutcome = { outcome: 'conflict', hold: HOLD };
    await expect(settleUntilFinal(submitting(conflict).submit, REQUEST)).resolves.toBe(conflict);
  });
});

describe('retryStatement', () => {
  it('runs a statement again after a deadlock, at most three times in all', async () => {
    let runs = 0;
    const statement = async () => {
      runs += 1;
      throw deadlock();
    };
    await expect(retryStatement(statement)).rejects.toMatchObject({ code: '40P01' });
    expect(runs).toBe(MAX_ATTEMPTS);
  });
});
