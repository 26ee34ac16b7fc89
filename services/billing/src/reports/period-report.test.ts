import { describe, expect, it } from '@jest/globals';
import { periodQueryOf } from './period-query.js';
import { periodReport } from './period-report.js';
import type { PeriodRows, RollForwardRow } from './report-repository.js';

/* The report's assembly without a database: identities checked, differences shown, not hidden. */

const query = periodQueryOf({ from: '2026-09-01', to: '2026-09-30' }, 'Africa/Algiers');

const account = (over: Partial<RollForwardRow> = {}): RollForwardRow => ({
  account_id: 'usr_a',
  name: 'A',
  status: 'active',
  opening: '1000',
  credits: '500',
  usage: '300',
  refunds: '100',
  adjustments: '0',
  closing: '1300',
  ...over,
});

function rows(over: Partial<PeriodRows> = {}): PeriodRows {
  return {
    bounds: {
      startsAt: new Date('2026-08-31T23:00:00Z'),
      endsAt: new Date('2026-09-30T23:00:00Z'),
    },
    trialBalance: [
      { ledger_account: 'customers', opening: '1000', debits: '300', credits: '600' },
      { ledger_account: 'system:funding', opening: '-1000', debits: '500', credits: '0' },
      { ledger_account: 'system:revenue', opening: '0', debits: '100', credits: '300' },
    ],
    liabilityTotal: account({ account_id: '*' }),
    accounts: [account()],
    revenue: [
      {
        day: '2026-09-01',
        model: 'm',
        priority: false,
        settlements: '1',
        refunds: '1',
        charged: '300',
        refunded: '100',
      },
    ],
    openHolds: { count: '0', reserved: '0' },
    ...over,
  };
}

describe('periodReport', () => {
  it('states every identity as holding when the books agree', () => {
    const report = periodReport(query, rows());
    expect(Object.values(report.checks).every(Boolean)).toBe(true);
    expect(report.trial_balance.totals).toMatchObject({
      opening_micro_dzd: '0',
      closing_micro_dzd: '0',
    });
    expect(report.customer_liability.total.difference_micro_dzd).toBe('0');
    expect(report.revenue.total).toMatchObject({ net_micro_dzd: '200', net_dzd: 0.0002 });
  });

  it('reports a difference in an account’s roll-forward instead of hiding it', () => {
    const report = periodReport(query, rows({ accounts: [account({ closing: '1290' })] }));
    expect(report.customer_liability.accounts[0]!.difference_micro_dzd).toBe('-10');
    expect(report.checks.roll_forward_holds).toBe(false);
  });

  it('flags revenue that does not match the revenue account, and an unbalanced trial balance', () => {
    const report = periodReport(
      query,
      rows({
        revenue: [
          {
            day: '2026-09-01',
            model: 'm',
            priority: true,
            settlements: '1',
            refunds: '0',
            charged: '300',
            refunded: '0',
          },
        ],
        trialBalance: [{ ledger_account: 'customers', opening: '5', debits: '0', credits: '0' }],
      }),
    );
    expect(report.checks.revenue_equals_revenue_account).toBe(false);
    expect(report.checks.trial_balance_sums_to_zero).toBe(false);
    expect(report.revenue.by_tier).toEqual([
      expect.objectContaining({ tier: 'priority', net_micro_dzd: '300' }),
    ]);
  });

  it('gives the next cursor only when a row beyond the page came back', () => {
    const one = { ...query, limit: 1 };
    const more = periodReport(
      one,
      rows({ accounts: [account(), account({ account_id: 'usr_b' })] }),
    );
    expect(more.customer_liability.accounts).toHaveLength(1);
    expect(more.customer_liability.next_cursor).toBe('usr_a');
    expect(periodReport(one, rows()).customer_liability.next_cursor).toBeNull();
  });
});
