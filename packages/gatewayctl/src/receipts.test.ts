import { describe, expect, it } from '@jest/globals';
import type { Receipt } from '@gateway/contracts';
import { EXIT } from './index.js';
import { useStandIn } from './stand-in.suite.js';

/*
 * `receipt <account> <request_id>` against a stand-in operator API on 127.0.0.1: the path sent
 * (the id encoded), the receipt printed one dotted field a line, and the gateway's 404.
 */

const RECEIPT: Receipt = {
  object: 'receipt',
  account_id: 'usr_1',
  request_id: 'req-42',
  job_id: 'chatcmpl-1',
  hold_id: 'chatcmpl-1',
  model: 'demo/chat-small',
  endpoint: 'chat.completions',
  key: 'prod',
  scoped_token_id: null,
  priority: false,
  status: 'succeeded',
  hold_status: 'settled',
  tokens: { prompt: 12, completion: 30, reasoning: 0 },
  price_per_million: { input_dzd: 100, output_dzd: 300 },
  hold_dzd: 0.5,
  settled_dzd: 0.0102,
  refunded_dzd: 0.0102,
  net_dzd: 0,
  hold_micro_dzd: '500000',
  settled_micro_dzd: '10200',
  refunded_micro_dzd: '10200',
  net_micro_dzd: '0',
  ledger: {
    settlement_transaction_id: 'txn_s',
    settlement_entry_ids: ['7', '8'],
    refund_transaction_id: 'txn_r',
    refund_entry_ids: ['9', '10'],
  },
  timings: {
    created_at: '2026-11-26T01:00:00.000Z',
    ended_at: '2026-11-26T01:00:01.000Z',
    refunded_at: '2026-11-26T01:00:31.000Z',
    queue_latency_ms: 5,
    generation_latency_ms: 900,
  },
};

const { sent, cli } = useStandIn((request, response) => {
  response.setHeader('Content-Type', 'application/json');
  if (request.url!.endsWith('/requests/gone')) {
    response.statusCode = 404;
    const error = { message: 'No request gone of this account', type: 'service_error' };
    return void response.end(JSON.stringify({ error: { ...error, code: 'resource_not_found' } }));
  }
  response.end(JSON.stringify(RECEIPT));
});

describe('gatewayctl receipt', () => {
  it('reads the receipt by request id and prints its money one field a line', async () => {
    const { code, stdout, stderr } = await cli('receipt', 'usr_1', 'req:42');
    expect({ code, stderr }).toEqual({ code: EXIT.ok, stderr: '' });
    expect(sent).toEqual(['GET /admin/v1/accounts/usr_1/requests/req%3A42']);
    expect(stdout).toMatch(/^net_dzd\s+0$/m);
    expect(stdout).toMatch(/^refunded_dzd\s+0\.0102$/m);
    expect(stdout).toMatch(/^tokens\.completion\s+30$/m);
    expect(stdout).toMatch(/^ledger\.settlement_entry_ids\s+7,8$/m);
    expect(stdout).toMatch(/^ledger\.refund_transaction_id\s+txn_r$/m);
  });

  it('prints the JSON as the gateway sent it with --json, and refuses an unknown request', async () => {
    const got = await cli('receipt', 'usr_1', 'chatcmpl-1', '--json');
    expect(got.code).toBe(EXIT.ok);
    expect(JSON.parse(got.stdout)).toEqual(RECEIPT);
    const missing = await cli('receipt', 'usr_1', 'gone');
    expect(missing.code).toBe(EXIT.refused);
    expect(missing.stderr).toContain('(resource_not_found)');
  });

  it('refuses an id that cannot be one path segment before sending anything', async () => {
    // No request id has a `/` (X-Request-Id is [A-Za-z0-9._:-]): the gateway would say 404 too.
    const { code, stderr } = await cli('receipt', 'usr_1', 'req:42/x');
    expect(code).toBe(EXIT.refused);
    expect(stderr).toContain('(resource_not_found)');
    expect(sent).toEqual([]);
  });

  it('needs both the account and the request id', async () => {
    const { code, stderr } = await cli('receipt', 'usr_1');
    expect(code).toBe(EXIT.usage);
    expect(stderr).toContain('missing <request_id>');
    expect(sent).toEqual([]);
  });
});
