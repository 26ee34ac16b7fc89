import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createBodyValidator,
  CreditRequestSchema,
  GatewayError,
  toErrorBody,
  type CreditRequest,
  type CreditResult,
  type LedgerCheck,
} from '@gateway/contracts';
import { EXIT } from './index.js';
import { cliAt, startStandIn } from './stand-in.suite.js';

/*
 * Bodies and answers of the operator API's contract against a stand-in on 127.0.0.1 that checks
 * what it receives as edge does: a credit without `--reference` leaves the field out (null is
 * refused), and `ledger check` prints its violations, which are lines of text.
 */

const validateCredit = createBodyValidator<CreditRequest>(CreditRequestSchema);
const VIOLATIONS = [
  'balances_match_entries: usr_a posted 10 but entries sum to 9',
  'transactions_balance: txn_b sums to 1',
];
const credits: unknown[] = [];

function answer(method: string, url: string, body: unknown): [number, unknown] {
  if (method === 'GET' && url === '/admin/v1/ledger/check') {
    return [200, { ok: false, violations: VIOLATIONS } satisfies LedgerCheck];
  }
  credits.push(body);
  try {
    validateCredit(body);
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return [400, toErrorBody(error)];
  }
  const result: CreditResult = {
    transaction_id: 'txn_1',
    balance_dzd: 5,
    reserved_dzd: 0,
    available_dzd: 5,
  };
  return [200, result];
}

let standIn: Awaited<ReturnType<typeof startStandIn>>;

beforeAll(async () => {
  standIn = await startStandIn((request, response, text) => {
    const body: unknown = text.length > 0 ? JSON.parse(text) : undefined;
    const [status, json] = answer(request.method!, request.url!, body);
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(json));
  });
});

afterAll(() => standIn.close());

const cli = (...argv: string[]) => cliAt(standIn.baseUrl, argv);

describe('gatewayctl and the operator API contract', () => {
  it('credits without a reference by leaving the field out', async () => {
    const { code, stderr } = await cli('credit', 'usr_a', '5', '--idempotency-key', 'k1');
    expect({ code, stderr }).toEqual({ code: EXIT.ok, stderr: '' });
    expect(credits.at(-1)).toEqual({ amount_dzd: 5 });
    await cli('credit', 'usr_a', '5', '--reference', 'wire-1', '--idempotency-key', 'k2');
    expect(credits.at(-1)).toEqual({ amount_dzd: 5, reference: 'wire-1' });
  });

  it('prints each ledger violation as its line', async () => {
    const { code, stdout } = await cli('ledger', 'check');
    expect(code).toBe(EXIT.violations);
    expect(stdout).toBe(VIOLATIONS.map((line) => `${line}\n`).join(''));
  });
});
