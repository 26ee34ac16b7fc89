import { describe, expect, it } from '@jest/globals';
import type { DashboardScopedTokenList } from '@gateway/contracts';
import { EXIT } from './index.js';
import { useStandIn } from './stand-in.suite.js';

/*
 * `tokens list` against a stand-in operator API on 127.0.0.1: the path and query sent, and the
 * table with each token's id (what `--token` takes for budgets and rate limits).
 */

const PAGE: DashboardScopedTokenList = {
  object: 'list',
  data: [
    {
      id: 'sct_2',
      api_key_name: 'prod',
      origin: 'issued',
      models: null,
      created_at: '2026-11-01T00:00:00.000Z',
      expires_at: '2026-12-01T00:00:00.000Z',
      revoked_at: null,
      spending_limit_dzd: 5,
      spent_dzd: 1.25,
      remaining_dzd: 3.75,
      state: 'valid',
    },
  ],
  next_cursor: 'sct_2',
};

const { sent, cli } = useStandIn((request, response) => {
  response.setHeader('Content-Type', 'application/json');
  response.end(JSON.stringify(PAGE));
});

describe('gatewayctl tokens list', () => {
  it("prints an account's tokens with their ids, and the next page's cursor", async () => {
    const listed = await cli('tokens', 'list', 'usr 1', '--limit', '1');
    expect([listed.code, listed.stderr]).toEqual([EXIT.ok, '']);
    expect(listed.stdout.split('\n')).toEqual([
      'ID     API_KEY_NAME  STATE  SPENT_DZD  EXPIRES_AT',
      'sct_2  prod          valid  1.25       2026-12-01T00:00:00.000Z',
      'next page: --cursor sct_2',
      '',
    ]);
    expect(sent).toEqual(['GET /admin/v1/accounts/usr%201/scoped-tokens?limit=1']);
  });

  it('refuses a missing account before sending anything', async () => {
    const refused = await cli('tokens', 'list');
    expect([refused.code, refused.stderr]).toEqual([EXIT.usage, 'gatewayctl: missing <account>\n']);
    expect(sent).toEqual([]);
  });
});
