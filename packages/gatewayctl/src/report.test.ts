import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PeriodReport } from '@gateway/contracts';
import { EXIT } from './index.js';
import { cliAt, startStandIn } from './stand-in.suite.js';

/*
 * `report <from> <to>` against a stand-in operator API on 127.0.0.1: the query sent, the checks
 * printed first (a failed identity is the violations exit code), and a CSV section to a file.
 */

const money = (name: string, micro: number) => ({
  [`${name}_micro_dzd`]: String(micro),
  [`${name}_dzd`]: micro / 1e6,
});
const rollForward = {
  ...money('opening', 1_000_000),
  ...money('credits', 500_000),
  ...money('usage', 300_000),
  ...money('refunds', 0),
  ...money('adjustments', 0),
  ...money('closing', 1_200_000),
  ...money('difference', 0),
};
const revenue = { ...money('charged', 300_000), ...money('refunded', 0), ...money('net', 300_000) };

function reportWith(checks: Partial<PeriodReport['checks']> = {}): PeriodReport {
  return {
    object: 'ledger_report',
    period: {
      from: '2026-09-01',
      to: '2026-09-30',
      time_zone: 'Africa/Algiers',
      starts_at: '2026-08-31T23:00:00.000Z',
      ends_at: '2026-09-30T23:00:00.000Z',
    },
    trial_balance: {
      lines: [
        {
          ledger_account: 'system:revenue',
          ...money('opening', 0),
          ...money('debits', 0),
          ...money('credits', 300_000),
          ...money('closing', 300_000),
        },
      ],
      totals: {
        ...money('opening', 0),
        ...money('debits', 0),
        ...money('credits', 0),
        ...money('closing', 0),
      },
    },
    customer_liability: { total: rollForward, accounts: [], next_cursor: null },
    revenue: {
      lines: [],
      by_day: [],
      by_model: [{ model: 'acme/m', ...revenue }],
      by_tier: [],
      total: revenue,
    },
    open_holds: { count: 2, ...money('reserved', 40_000) },
    checks: {
      trial_balance_sums_to_zero: true,
      roll_forward_holds: true,
      liability_equals_customers_line: true,
      revenue_equals_revenue_account: true,
      ...checks,
    },
  } as unknown as PeriodReport;
}

const CLOSED = {
  object: 'ledger_period',
  period: '2026-09',
  time_zone: 'Africa/Algiers',
  starts_at: '2026-08-31T23:00:00.000Z',
  ends_at: '2026-09-30T23:00:00.000Z',
  entries_count: 42,
  entries_digest: 'a'.repeat(64),
  closed_at: '2026-10-02T08:00:00.000Z',
  closed_by: 'finance@example.com',
  report: reportWith(),
};

let standIn: Awaited<ReturnType<typeof startStandIn>>;
let sent: { url: string; accept: string | undefined; method?: string; body?: string }[] = [];
let answer = reportWith();

beforeAll(async () => {
  standIn = await startStandIn((request, response, body) => {
    if (request.url!.startsWith('/admin/v1/ledger/periods')) {
      sent.push({ url: request.url!, accept: undefined, method: request.method!, body });
      response.setHeader('Content-Type', 'application/json');
      response.statusCode = request.method === 'POST' ? 201 : 200;
      const data = request.method === 'POST' ? CLOSED : { object: 'list', data: [CLOSED] };
      return void response.end(JSON.stringify(data));
    }
    sent.push({ url: request.url!, accept: request.headers.accept });
    if (request.headers.accept === 'text/csv') {
      response.setHeader('Content-Type', 'text/csv');
      return void response.end('account_id,name\r\ntotal,\r\n');
    }
    response.setHeader('Content-Type', 'application/json');
    response.end(JSON.stringify(answer));
  });
});

beforeEach(() => {
  sent = [];
  answer = reportWith();
});

afterAll(async () => {
  await standIn.close();
});

const cli = (...argv: string[]) => cliAt(standIn.baseUrl, argv);

describe('gatewayctl report', () => {
  it('asks for the period and prints the checks, the tables and the open holds', async () => {
    const { code, stdout } = await cli('report', '2026-09-01', '2026-09-30', '--time-zone', 'UTC');
    expect(code).toBe(EXIT.ok);
    expect(sent.map((s) => s.url)).toEqual([
      '/admin/v1/ledger/report?from=2026-09-01&to=2026-09-30&time_zone=UTC',
    ]);
    expect(stdout).toContain('checks: every identity holds');
    expect(stdout).toMatch(/^system:revenue\s+0\s+0\s+0\.3\s+0\.3$/m);
    expect(stdout).toMatch(/^acme\/m\s+0\.3\s+0\s+0\.3$/m);
    expect(stdout).toContain('open holds at the end: 2 (0.04 DZD reserved)');
  });

  it('names a failed identity and exits with the violations code', async () => {
    answer = reportWith({ roll_forward_holds: false });
    const { code, stdout } = await cli('report', '2026-09-01', '2026-09-30');
    expect(code).toBe(EXIT.violations);
    expect(stdout).toContain('CHECKS FAILED: roll_forward_holds');
  });

  it('writes one CSV section to a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatewayctl-report-'));
    try {
      const file = join(dir, 'rf.csv');
      const { code } = await cli(
        'report',
        '2026-09-01',
        '2026-09-30',
        '--csv',
        'revenue',
        '--out',
        file,
      );
      expect(code).toBe(EXIT.ok);
      expect(sent).toEqual([
        {
          url: '/admin/v1/ledger/report?from=2026-09-01&to=2026-09-30&section=revenue',
          accept: 'text/csv',
        },
      ]);
      expect(await readFile(file, 'utf8')).toBe('account_id,name\r\ntotal,\r\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('gatewayctl periods', () => {
  it('closes a month with who closed it, and lists the closed months', async () => {
    const closed = await cli('periods', 'close', '2026-09', '--by', 'finance@example.com');
    expect(closed.code).toBe(EXIT.ok);
    expect(sent).toEqual([
      {
        url: '/admin/v1/ledger/periods/2026-09/close',
        accept: undefined,
        method: 'POST',
        body: JSON.stringify({ closed_by: 'finance@example.com' }),
      },
    ]);
    expect(closed.stdout).toMatch(/^2026-09\s+Africa\/Algiers\s+42\s+1\.2\s+0\.3/m);
    const list = await cli('periods');
    expect(list.code).toBe(EXIT.ok);
    expect(list.stdout).toContain('finance@example.com');
  });
});
