/**
 * The period report from the repository's rows (no database here): amounts as exact bigints,
 * the roll-forward's difference per account and in total, revenue rolled up by day, model and
 * tier, and each identity the report states checked. A broken identity is reported (its
 * difference and a false check), never corrected.
 */
import { microDzdToDzd, type PeriodReport } from '@gateway/contracts';
import type { PeriodQuery, PeriodRows, RevenueRow, RollForwardRow } from './report-repository.js';

type Amount<K extends string> = Record<`${K}_micro_dzd`, string> & Record<`${K}_dzd`, number>;

function amount<K extends string>(name: K, value: bigint): Amount<K> {
  return {
    [`${name}_micro_dzd`]: value.toString(),
    [`${name}_dzd`]: microDzdToDzd(value),
  } as Amount<K>;
}

const ROLL_FORWARD = ['opening', 'credits', 'usage', 'refunds', 'adjustments', 'closing'] as const;
type RollForwardSums = Record<(typeof ROLL_FORWARD)[number], bigint>;

function sumsOf(row: RollForwardRow): RollForwardSums {
  return Object.fromEntries(ROLL_FORWARD.map((k) => [k, BigInt(row[k])])) as RollForwardSums;
}

/** closing − (opening + credits − usage + refunds + adjustments): zero when the books agree. */
export function rollForwardDifference(s: RollForwardSums): bigint {
  return s.closing - (s.opening + s.credits - s.usage + s.refunds + s.adjustments);
}

function rollForward(row: RollForwardRow) {
  const sums = sumsOf(row);
  return {
    ...amount('opening', sums.opening),
    ...amount('credits', sums.credits),
    ...amount('usage', sums.usage),
    ...amount('refunds', sums.refunds),
    ...amount('adjustments', sums.adjustments),
    ...amount('closing', sums.closing),
    ...amount('difference', rollForwardDifference(sums)),
  };
}

function trialBalance(rows: PeriodRows['trialBalance']) {
  const totals = { opening: 0n, debits: 0n, credits: 0n, closing: 0n };
  const lines = rows.map((row) => {
    const opening = BigInt(row.opening);
    const debits = BigInt(row.debits);
    const credits = BigInt(row.credits);
    const closing = opening + credits - debits;
    totals.opening += opening;
    totals.debits += debits;
    totals.credits += credits;
    totals.closing += closing;
    return {
      ledger_account: row.ledger_account,
      ...amount('opening', opening),
      ...amount('debits', debits),
      ...amount('credits', credits),
      ...amount('closing', closing),
    };
  });
  return { lines, totals };
}

interface RevenueSums {
  charged: bigint;
  refunded: bigint;
}

const revenueAmounts = (s: RevenueSums) => ({
  ...amount('charged', s.charged),
  ...amount('refunded', s.refunded),
  ...amount('net', s.charged - s.refunded),
});

function rollUp(rows: RevenueRow[], keyOf: (row: RevenueRow) => string): Map<string, RevenueSums> {
  const groups = new Map<string, RevenueSums>();
  for (const row of rows) {
    const key = keyOf(row);
    const sums = groups.get(key) ?? { charged: 0n, refunded: 0n };
    sums.charged += BigInt(row.charged);
    sums.refunded += BigInt(row.refunded);
    groups.set(key, sums);
  }
  return groups;
}

const tierOf = (row: RevenueRow): 'default' | 'priority' => (row.priority ? 'priority' : 'default');

/** The groups of one roll-up, sorted by key, each with its amounts. */
function grouped(rows: RevenueRow[], keyOf: (row: RevenueRow) => string) {
  return [...rollUp(rows, keyOf)]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, sums]) => ({ key, ...revenueAmounts(sums) }));
}

function revenue(rows: RevenueRow[]) {
  const total = rollUp(rows, () => 'all').get('all') ?? { charged: 0n, refunded: 0n };
  return {
    lines: rows.map((row) => ({
      day: row.day,
      model: row.model,
      tier: tierOf(row),
      settlements: Number(row.settlements),
      refunds: Number(row.refunds),
      ...revenueAmounts({ charged: BigInt(row.charged), refunded: BigInt(row.refunded) }),
    })),
    by_day: grouped(rows, (row) => row.day).map(({ key, ...sums }) => ({ day: key, ...sums })),
    by_model: grouped(rows, (row) => row.model).map(({ key, ...sums }) => ({
      model: key,
      ...sums,
    })),
    by_tier: grouped(rows, tierOf).map(({ key, ...sums }) => ({
      tier: key as 'default' | 'priority',
      ...sums,
    })),
    total: revenueAmounts(total),
    totalNet: total.charged - total.refunded,
  };
}

export function periodReport(query: PeriodQuery, rows: PeriodRows): PeriodReport {
  const balance = trialBalance(rows.trialBalance);
  const page = rows.accounts.slice(0, query.limit);
  const accounts = page.map((row) => ({
    account_id: row.account_id,
    name: row.name,
    status: row.status,
    ...rollForward(row),
  }));
  const total = rollForward(rows.liabilityTotal);
  const earned = revenue(rows.revenue);
  const line = (name: string) => balance.lines.find((l) => l.ledger_account === name);
  const customers = BigInt(line('customers')?.closing_micro_dzd ?? '0');
  const revenueLine = line('system:revenue');
  const revenueMoved = revenueLine
    ? BigInt(revenueLine.credits_micro_dzd) - BigInt(revenueLine.debits_micro_dzd)
    : 0n;
  const { totalNet, ...revenueReport } = earned;
  return {
    object: 'ledger_report',
    period: {
      from: query.from,
      to: query.to,
      time_zone: query.timeZone,
      starts_at: rows.bounds.startsAt.toISOString(),
      ends_at: rows.bounds.endsAt.toISOString(),
    },
    trial_balance: {
      lines: balance.lines,
      totals: {
        ...amount('opening', balance.totals.opening),
        ...amount('debits', balance.totals.debits),
        ...amount('credits', balance.totals.credits),
        ...amount('closing', balance.totals.closing),
      },
    },
    customer_liability: {
      total,
      accounts,
      next_cursor: rows.accounts.length > query.limit ? (page.at(-1)?.account_id ?? null) : null,
    },
    revenue: revenueReport,
    open_holds: {
      count: Number(rows.openHolds.count),
      ...amount('reserved', BigInt(rows.openHolds.reserved)),
    },
    checks: {
      trial_balance_sums_to_zero: balance.totals.opening === 0n && balance.totals.closing === 0n,
      roll_forward_holds: [total, ...accounts].every((a) => a.difference_micro_dzd === '0'),
      liability_equals_customers_line: BigInt(total.closing_micro_dzd) === customers,
      revenue_equals_revenue_account: totalNet === revenueMoved,
    },
  };
}
