import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { BudgetView } from '@gateway/contracts';
import { EXIT, helpText } from './index.js';
import { cliAt, startStandIn } from './stand-in.suite.js';

/*
 * `budgets set|get|rm|list` against a stand-in operator API on 127.0.0.1: the paths and bodies
 * sent, what is printed, and the flags refused before anything is sent.
 */

const VIEW: BudgetView = {
  object: 'budget',
  applies_to: 'api_key',
  owner: 'prod',
  period: 'month',
  time_zone: 'Africa/Algiers',
  limit_dzd: 2500.5,
  spent_dzd: 12.25,
  reserved_dzd: 0.45,
  remaining_dzd: 2487.8,
  limit_micro_dzd: '2500500000',
  spent_micro_dzd: '12250000',
  reserved_micro_dzd: '450000',
  remaining_micro_dzd: '2487800000',
  window_start: '2026-10-31T23:00:00.000Z',
  resets_at: '2026-11-30T23:00:00.000Z',
};

let standIn: Awaited<ReturnType<typeof startStandIn>>;
let sent: { method: string; url: string; body: unknown }[] = [];

beforeAll(async () => {
  standIn = await startStandIn((request, response, text) => {
    sent.push({
      method: request.method!,
      url: request.url!,
      body: text === '' ? undefined : JSON.parse(text),
    });
    response.setHeader('Content-Type', 'application/json');
    if (request.url!.includes('/scoped-tokens/tok_gone/')) {
      response.statusCode = 404;
      const error = { message: 'Budget of scoped token tok_gone not found', type: 'service_error' };
      return void response.end(JSON.stringify({ error: { ...error, code: 'resource_not_found' } }));
    }
    if (request.method === 'DELETE') return void response.writeHead(204).end();
    if (request.url!.endsWith('/budgets')) {
      return void response.end(JSON.stringify({ object: 'list', data: [VIEW] }));
    }
    response.end(JSON.stringify(VIEW));
  });
});

beforeEach(() => {
  sent = [];
});

afterAll(async () => {
  await standIn.close();
});

const cli = (...argv: string[]) => cliAt(standIn.baseUrl, argv);

describe('gatewayctl budgets', () => {
  it("sets a key's budget: the exact limit as text, the period and the zone", async () => {
    const { code, stdout, stderr } = await cli(
      'budgets',
      'set',
      'usr_1',
      '--key',
      'prod',
      '--limit-dzd',
      '2500.5',
      '--period',
      'month',
      '--time-zone',
      'Africa/Algiers',
    );
    expect({ code, stderr }).toEqual({ code: EXIT.ok, stderr: '' });
    expect(sent).toEqual([
      {
        method: 'PUT',
        url: '/admin/v1/accounts/usr_1/api-keys/prod/budget',
        body: { limit_dzd: '2500.5', period: 'month', time_zone: 'Africa/Algiers' },
      },
    ]);
    expect(stdout).toMatch(/^remaining_dzd\s+2487\.8$/m);
    expect(stdout).toMatch(/^resets_at\s+2026-11-30T23:00:00\.000Z$/m);
  });

  it("reads and removes a token's budget, and prints the gateway's refusal", async () => {
    const got = await cli('budgets', 'get', 'usr_1', '--token', 'tok_1', '--json');
    expect(got.code).toBe(EXIT.ok);
    expect(JSON.parse(got.stdout)).toEqual(VIEW);
    const removed = await cli('budgets', 'rm', 'usr_1', '--token', 'tok_1');
    expect([removed.code, removed.stdout]).toEqual([EXIT.ok, 'removed\n']);
    expect(sent.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'GET /admin/v1/accounts/usr_1/scoped-tokens/tok_1/budget',
      'DELETE /admin/v1/accounts/usr_1/scoped-tokens/tok_1/budget',
    ]);
    const missing = await cli('budgets', 'get', 'usr_1', '--token', 'tok_gone');
    expect(missing.code).toBe(EXIT.refused);
    expect(missing.stderr).toContain('(resource_not_found)');
  });

  it("lists the account's budgets as a table", async () => {
    const { code, stdout } = await cli('budgets', 'list', 'usr_1');
    expect(code).toBe(EXIT.ok);
    expect(sent.map(({ url }) => url)).toEqual(['/admin/v1/accounts/usr_1/budgets']);
    const [header, row] = stdout.trimEnd().split('\n');
    expect(header!.split(/\s+/)).toEqual([
      'APPLIES_TO',
      'OWNER',
      'PERIOD',
      'TIME_ZONE',
      'LIMIT_DZD',
      'SPENT_DZD',
      'RESERVED_DZD',
      'REMAINING_DZD',
      'RESETS_AT',
    ]);
    expect(row!.split(/\s+/).slice(0, 3)).toEqual(['api_key', 'prod', 'month']);
  });

  it('refuses bad flags before sending anything (exit 2)', async () => {
    const cases = [
      ['budgets', 'set', 'usr_1', '--limit-dzd', '5', '--period', 'day'],
      ['budgets', 'get', 'usr_1', '--key', 'prod', '--token', 'tok_1'],
      ['budgets', 'set', 'usr_1', '--key', 'prod', '--limit-dzd', '5', '--period', 'year'],
      ['budgets', 'set', 'usr_1', '--key', 'prod', '--limit-dzd', '1.1234567', '--period', 'day'],
      ['budgets', 'set', 'usr_1', '--key', 'prod', '--period', 'day'],
      ['budgets', 'list'],
    ];
    for (const argv of cases) {
      const { code, stderr } = await cli(...argv);
      expect([argv.join(' '), code]).toEqual([argv.join(' '), EXIT.usage]);
      expect(stderr).not.toBe('');
    }
    expect(sent).toEqual([]);
    expect(helpText()).toContain('budgets set <account> --key NAME | --token TOKEN_ID');
  });
});
