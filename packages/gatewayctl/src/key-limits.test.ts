import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { KeyRateLimitList, KeyRateLimitView } from '@gateway/contracts';
import { EXIT, helpText } from './index.js';
import { cliAt, startStandIn } from './stand-in.suite.js';

/*
 * `rate-limits set|get|rm|list` against a stand-in operator API on 127.0.0.1: the paths and bodies
 * sent, what is printed, and the flags refused before anything is sent.
 */

const VIEW: KeyRateLimitView = {
  object: 'rate_limit',
  applies_to: 'api_key',
  owner: 'prod',
  requests_per_minute: 60,
  tokens_per_minute: null,
};

const LIST: KeyRateLimitList = {
  object: 'list',
  data: [
    VIEW,
    {
      object: 'rate_limit',
      applies_to: 'scoped_token',
      owner: 'tok_1',
      requests_per_minute: null,
      tokens_per_minute: 250_000,
    },
  ],
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
    if (request.url!.endsWith('/rate-limits')) return void response.end(JSON.stringify(LIST));
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

describe('gatewayctl rate-limits', () => {
  it("sets a key's limits (none removes one) and prints them", async () => {
    const set = await cli('rate-limits', 'set', 'usr_1', '--key', 'prod', '--rpm', '60');
    expect([set.code, set.stderr]).toEqual([EXIT.ok, '']);
    expect(set.stdout).toMatch(/^requests_per_minute\s+60$/m);
    const cleared = await cli('rate-limits', 'set', 'usr_1', '--token', 'tok_1', '--tpm', 'none');
    expect(cleared.code).toBe(EXIT.ok);
    expect(sent).toEqual([
      {
        method: 'PUT',
        url: '/admin/v1/accounts/usr_1/api-keys/prod/rate-limit',
        body: { requests_per_minute: 60 },
      },
      {
        method: 'PUT',
        url: '/admin/v1/accounts/usr_1/scoped-tokens/tok_1/rate-limit',
        body: { tokens_per_minute: null },
      },
    ]);
  });

  it('reads and removes them', async () => {
    const got = await cli('rate-limits', 'get', 'usr_1', '--key', 'prod', '--json');
    expect(JSON.parse(got.stdout)).toEqual(VIEW);
    const removed = await cli('rate-limits', 'rm', 'usr_1', '--key', 'prod');
    expect([removed.code, removed.stdout]).toEqual([EXIT.ok, 'removed\n']);
    expect(sent.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'GET /admin/v1/accounts/usr_1/api-keys/prod/rate-limit',
      'DELETE /admin/v1/accounts/usr_1/api-keys/prod/rate-limit',
    ]);
  });

  it("lists an account's limits as a table", async () => {
    const listed = await cli('rate-limits', 'list', 'usr 1');
    expect([listed.code, listed.stderr]).toEqual([EXIT.ok, '']);
    expect(listed.stdout.split('\n')).toEqual([
      'APPLIES_TO    OWNER  REQUESTS_PER_MINUTE  TOKENS_PER_MINUTE',
      'api_key       prod   60                   -',
      'scoped_token  tok_1  -                    250000',
      '',
    ]);
    const json = await cli('rate-limits', 'list', 'usr 1', '--json');
    expect(JSON.parse(json.stdout)).toEqual(LIST);
    expect(sent.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'GET /admin/v1/accounts/usr%201/rate-limits',
      'GET /admin/v1/accounts/usr%201/rate-limits',
    ]);
    expect((await cli('rate-limits', 'list')).code).toBe(EXIT.usage);
  });

  it('refuses bad flags before sending anything (exit 2)', async () => {
    const cases = [
      ['rate-limits', 'set', 'usr_1', '--rpm', '5'],
      ['rate-limits', 'set', 'usr_1', '--key', 'prod'],
      ['rate-limits', 'set', 'usr_1', '--key', 'prod', '--rpm', '0'],
      ['rate-limits', 'set', 'usr_1', '--key', 'prod', '--tpm', '1.5'],
      ['rate-limits', 'get', 'usr_1', '--key', 'prod', '--token', 'tok_1'],
    ];
    for (const argv of cases) {
      const { code, stderr } = await cli(...argv);
      expect([argv.join(' '), code]).toEqual([argv.join(' '), EXIT.usage]);
      expect(stderr).not.toBe('');
    }
    expect(sent).toEqual([]);
    expect(helpText()).toContain('rate-limits set <account> --key NAME | --token TOKEN_ID');
  });
});
