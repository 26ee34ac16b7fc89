import { describe, expect, it } from '@jest/globals';
import type { ClientOutcome } from '../faults/fault-client.js';
import { checkOperation, type HoldRow } from './checker.js';
import type { Operation } from './workload.js';

/* The per-operation rules on hand-made histories: each rule is seen to hold and to break. */

const customer = { accountId: 'acc', apiKey: 'k', keyName: 'k', creditMicroDzd: 0n };

const op = (kind: Operation['kind'], ...outcomes: Partial<ClientOutcome>[]): Operation => ({
  id: 'op-1',
  kind,
  customer,
  invokedMs: 0,
  completedMs: 100,
  attempts: outcomes.map((outcome) => ({
    edge: 'edge',
    startMs: 0,
    endMs: 100,
    outcome: { kind: 'answer', status: 200, relayed: 0, body: '', ...outcome },
  })),
});

const hold = (fields: Partial<HoldRow>): HoldRow => ({
  id: 'h1',
  account_id: 'acc',
  request_id: 'op-1',
  status: 'settled',
  amount: '500000',
  settled: '0',
  refunded: false,
  past_expiry: false,
  key_budget_id: null,
  rate_key_id: null,
  rate_window_start_ms: null,
  rate_tokens: null,
  ...fields,
});

/** 10 prompt and 20 completion tokens at 1,000 and 2,000 µDZD per token. */
const usage = { prompt_tokens: 10, completion_tokens: 20 };
const COST = '50000';
const rules = (found: { rule: string }[]) => found.map((violation) => violation.rule);

describe('the nemesis checker, per operation', () => {
  it('accepts an answer charged once, exactly its usage', () => {
    expect(checkOperation(op('chat', { usage }), [hold({ settled: COST })], [])).toEqual([]);
  });

  it('finds an answer charged twice, or not its usage', () => {
    const twice = [hold({ settled: COST }), hold({ id: 'h2', settled: COST })];
    expect(rules(checkOperation(op('chat', { usage }), twice, []))).toEqual(
      expect.arrayContaining(['charged once', 'charged its usage']),
    );
    const wrong = [hold({ settled: '49000' })];
    expect(rules(checkOperation(op('chat', { usage }), wrong, []))).toEqual(['charged its usage']);
  });

  it('does not count a refunded charge: a lost first answer and a charged retry', () => {
    const holds = [hold({ settled: COST, refunded: true }), hold({ id: 'h2', settled: COST })];
    const history = op('chat-retry', { kind: 'cut', status: 0 }, { usage });
    expect(checkOperation(history, holds, [])).toEqual([]);
  });

  it('finds a charge kept for a request that got nothing', () => {
    const history = op('chat', { kind: 'error', status: 504 });
    expect(rules(checkOperation(history, [hold({ settled: COST })], []))).toEqual([
      'no charge without an answer',
    ]);
    expect(checkOperation(history, [hold({ status: 'voided' })], [])).toEqual([]);
  });

  it('lets a stream whose chunks were relayed, or a client that left, be charged', () => {
    const cutStream = op('stream', { kind: 'cut', status: 200, relayed: 4 });
    expect(checkOperation(cutStream, [hold({ settled: '9000' })], [])).toEqual([]);
    const leaving = op('stream-leave', { kind: 'left', status: 200, relayed: 3 });
    expect(checkOperation(leaving, [hold({ settled: '9000' })], [])).toEqual([]);
  });

  it('finds a hold left pending or settled above its amount', () => {
    const pending = checkOperation(op('chat', { kind: 'cut' }), [hold({ status: 'pending' })], []);
    expect(rules(pending)).toEqual(['no hold left pending']);
    const above = checkOperation(op('chat', { usage }), [hold({ settled: COST, amount: '1' })], []);
    expect(rules(above)).toContain('never above its hold');
  });

  it('holds an async job to one delivery id and a webhook that matches the ledger', () => {
    const job = op('async', { kind: 'accepted', status: 202 });
    const charged = [hold({ settled: COST })];
    const hook = { id: 'd1', status: 'succeeded' };
    expect(checkOperation(job, charged, [hook, hook])).toEqual([]);
    expect(rules(checkOperation(job, charged, []))).toEqual(['async job delivered']);
    const twoIds = checkOperation(job, charged, [hook, { id: 'd2', status: 'succeeded' }]);
    expect(rules(twoIds)).toEqual(['one delivery id']);
    expect(rules(checkOperation(job, [], [hook]))).toEqual(['webhook matches ledger']);
    const failed = checkOperation(job, charged, [{ id: 'd1', status: 'failed' }]);
    expect(rules(failed)).toEqual(['webhook matches ledger']);
  });
});
