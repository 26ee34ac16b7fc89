import { describe, expect, it } from '@jest/globals';
import type { OpenHoldList } from '@gateway/contracts';
import { EXIT } from './index.js';
import { useStandIn } from './stand-in.suite.js';

/*
 * `holds <account>` against a stand-in operator API on 127.0.0.1: the path sent, each open hold
 * a row with its amount in DZD (exact, from the µDZD digits), the reserved total, and a note
 * when the gateway listed only the oldest.
 */

const HOLDS: OpenHoldList = {
  object: 'list',
  data: [
    {
      hold_id: 'chatcmpl-1',
      model: 'demo/chat-small',
      amount_micro_dzd: '9007199254740993',
      priority: false,
      scoped_token_id: null,
      published: true,
      created_at: '2026-11-29T10:00:00.000Z',
      expires_at: '2026-11-29T10:10:00.000Z',
    },
  ],
  has_more: true,
  reserved_micro_dzd: '9007199254750993',
};

const { sent, cli } = useStandIn((request, response) => {
  response.setHeader('Content-Type', 'application/json');
  response.end(JSON.stringify(HOLDS));
});

describe('gatewayctl holds', () => {
  it("lists the account's open holds with exact amounts and the reserved total", async () => {
    const { code, stdout, stderr } = await cli('holds', 'usr_1');
    expect({ code, stderr }).toEqual({ code: EXIT.ok, stderr: '' });
    expect(sent).toEqual(['GET /admin/v1/accounts/usr_1/holds']);
    // Beyond a double's exact range: the digits are converted as text, not as a number.
    expect(stdout).toMatch(/^chatcmpl-1\s+demo\/chat-small\s+9007199254\.740993\s+true\s/m);
    expect(stdout).toContain('more open holds than shown');
    expect(stdout).toMatch(/^reserved_dzd: 9007199254\.750993$/m);
  });

  it('prints the JSON as the gateway sent it with --json, and needs the account', async () => {
    const got = await cli('holds', 'usr_1', '--json');
    expect(JSON.parse(got.stdout)).toEqual(HOLDS);
    const missing = await cli('holds');
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toContain('missing <account>');
  });
});
