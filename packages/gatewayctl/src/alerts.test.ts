import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { AlertSettingsView } from '@gateway/contracts';
import { EXIT } from './index.js';
import { cliAt, startStandIn } from './stand-in.suite.js';

/*
 * `alerts set|get|rm` against a stand-in operator API on 127.0.0.1: the path and body sent,
 * what is printed, and flags refused before anything is sent.
 */

const VIEW: AlertSettingsView = {
  object: 'alert_settings',
  account_id: 'usr_1',
  url: 'https://hooks.example.com/alerts',
  enabled: true,
  balance_below_dzd: 250.5,
  balance_below_micro_dzd: '250500000',
  budget_thresholds_percent: [50, 90],
  exhaustion_hours: 48,
  updated_at: '2026-11-26T10:00:00.000Z',
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
    if (request.method === 'DELETE') return void response.writeHead(204).end();
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

describe('gatewayctl alerts', () => {
  it('sets the alerts: the threshold as exact text, the shares as numbers', async () => {
    const { code, stdout, stderr } = await cli(
      ...['alerts', 'set', 'usr_1', '--endpoint', 'https://hooks.example.com/alerts'],
      ...['--balance-below-dzd', '250.5', '--budget-thresholds', '50,90'],
      ...['--exhaustion-hours', '48'],
    );
    expect({ code, stderr }).toEqual({ code: EXIT.ok, stderr: '' });
    expect(sent).toEqual([
      {
        method: 'PUT',
        url: '/admin/v1/accounts/usr_1/alerts',
        body: {
          url: 'https://hooks.example.com/alerts',
          enabled: true,
          balance_below_dzd: '250.5',
          budget_thresholds_percent: [50, 90],
          exhaustion_hours: 48,
        },
      },
    ]);
    expect(stdout).toMatch(/^balance_below_dzd\s+250\.5$/m);
  });

  it('reads and removes them', async () => {
    const got = await cli('alerts', 'get', 'usr_1', '--json');
    expect(JSON.parse(got.stdout)).toEqual(VIEW);
    const removed = await cli('alerts', 'rm', 'usr_1');
    expect([removed.code, removed.stdout]).toEqual([EXIT.ok, 'removed\n']);
    expect(sent.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'GET /admin/v1/accounts/usr_1/alerts',
      'DELETE /admin/v1/accounts/usr_1/alerts',
    ]);
  });

  it('refuses bad flags before sending anything', async () => {
    for (const flags of [
      ['--balance-below-dzd', '1'],
      ['--endpoint', 'https://h.example', '--budget-thresholds', '0,50'],
      ['--endpoint', 'https://h.example', '--exhaustion-hours', '721'],
      ['--endpoint', 'https://h.example', '--balance-below-dzd', '1.1234567'],
    ]) {
      const { code } = await cli('alerts', 'set', 'usr_1', ...flags);
      expect(code).toBe(EXIT.usage);
    }
    expect(sent).toEqual([]);
  });
});
