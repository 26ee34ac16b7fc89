import { describe, expect, it } from '@jest/globals';
import { entryPageToWire, statementToWire } from './ledger-wire.js';

/*
 * The ledger's statement and entries on the operator API's wire: every amount exact as digit
 * strings (beyond 2^53 too), instants as ISO 8601, the contract's field names.
 */

const at = new Date('2026-11-01T10:00:00.000Z');
const BIG = 9_007_199_254_740_993n; // 2^53 + 1: no JSON number holds it exactly

describe('ledger wire', () => {
  it('writes a statement with its lines, amounts as exact digit strings', () => {
    expect(
      statementToWire({
        accountId: 'acc_1',
        from: at,
        to: new Date('2026-12-01T00:00:00.000Z'),
        openingBalanceMicroDzd: BIG,
        totalCreditsMicroDzd: 5_000_000n,
        totalDebitsMicroDzd: 156_000n,
        closingBalanceMicroDzd: BIG + 5_000_000n - 156_000n,
        lines: [
          {
            entryId: 42n,
            transactionId: 'txn_1',
            kind: 'hold_settlement',
            reference: null,
            holdId: 'chatcmpl-1',
            createdAt: at,
            amountMicroDzd: -156_000n,
            balanceAfterMicroDzd: BIG - 156_000n,
          },
        ],
      }),
    ).toEqual({
      account_id: 'acc_1',
      from: '2026-11-01T10:00:00.000Z',
      to: '2026-12-01T00:00:00.000Z',
      opening_balance_micro_dzd: '9007199254740993',
      total_credits_micro_dzd: '5000000',
      total_debits_micro_dzd: '156000',
      closing_balance_micro_dzd: '9007199259584993',
      lines: [
        {
          entry_id: '42',
          transaction_id: 'txn_1',
          kind: 'hold_settlement',
          reference: null,
          hold_id: 'chatcmpl-1',
          created_at: '2026-11-01T10:00:00.000Z',
          amount_micro_dzd: '-156000',
          balance_after_micro_dzd: '9007199254584993',
        },
      ],
    });
  });

  it('writes a page of entries with each amount in DZD beside its µDZD', () => {
    expect(
      entryPageToWire({
        entries: [
          {
            id: 7n,
            transactionId: 'txn_2',
            kind: 'credit',
            ledgerAccount: 'customer:acc_1',
            accountId: 'acc_1',
            amountMicroDzd: 1_500_001n,
            reference: 'wire 12',
            holdId: null,
            createdAt: at,
          },
        ],
        nextCursor: 'cur_1',
        through: at,
      }),
    ).toEqual({
      entries: [
        {
          id: '7',
          transaction_id: 'txn_2',
          kind: 'credit',
          ledger_account: 'customer:acc_1',
          account_id: 'acc_1',
          amount_micro_dzd: '1500001',
          amount_dzd: 1.500001,
          reference: 'wire 12',
          hold_id: null,
          created_at: '2026-11-01T10:00:00.000Z',
        },
      ],
      next_cursor: 'cur_1',
    });
  });
});
