import { fundAccount, type OperatorCall } from '@gateway/testing';
import { STAND_IN_PRICES } from '../abuse/abuse-stack.js';
import type { FaultStack } from '../faults/fault-stack.js';

/*
 * The nemesis's customers: funded accounts (plain), a second key on each of them with a budget
 * and its own per-minute limits (limited), and accounts with a few requests' worth of credit
 * (poor). Set up through the operator API, as an operator would.
 */

export interface Customer {
  accountId: string;
  apiKey: string;
  keyName: string;
  /** What the account was credited, µDZD. */
  creditMicroDzd: bigint;
}

export const EMBEDDING_MODEL = 'faults/embedding';
export const PLAIN_ACCOUNTS = 6;
export const POOR_ACCOUNTS = 2;
export const POOR_CREDIT_DZD = 0.5;
export const PLAIN_CREDIT_DZD = 10_000;
/**
 * The limited keys' budget (total: it never resets) and per-minute limits: low enough that the
 * limited operations (about 12 a minute per key at 4 operations a second) meet both within a
 * short run, the limit in the first minute and the budget within two.
 */
export const LIMITED_KEY = {
  budgetDzd: 0.5,
  requestsPerMinute: 6,
  tokensPerMinute: 1_000,
} as const;
/** How many accounts get a limited key: few, so each sees enough traffic to meet its limits. */
export const LIMITED_KEYS = 2;

const MICRO_PER_DZD = 1_000_000;

async function limitedKey(operator: OperatorCall, accountId: string): Promise<string> {
  const { key } = await operator<{ key: string }>('POST', `/accounts/${accountId}/api-keys`, {
    name: 'limited',
  });
  const keyPath = `/accounts/${accountId}/api-keys/limited`;
  await operator('PUT', `${keyPath}/budget`, {
    limit_dzd: LIMITED_KEY.budgetDzd,
    period: 'total',
  });
  await operator('PUT', `${keyPath}/rate-limit`, {
    requests_per_minute: LIMITED_KEY.requestsPerMinute,
    tokens_per_minute: LIMITED_KEY.tokensPerMinute,
  });
  return key;
}

export async function openCustomers(stack: FaultStack, seed: number) {
  const { operator } = stack;
  await operator('PUT', `/models/${EMBEDDING_MODEL}`, {
    kind: 'embedding',
    provider: 'node',
    upstream_model: 'stand-in',
    nodes: [{ url: `http://127.0.0.1:${stack.paths?.model.port ?? stack.node.port}` }],
    max_output_tokens: 64,
    input_price_dzd_per_m: STAND_IN_PRICES.input,
    output_price_dzd_per_m: STAND_IN_PRICES.output,
  });
  const open = (name: string, creditDzd: number) =>
    fundAccount(operator, {
      name,
      keyName: 'k',
      creditDzd,
      credit: { reference: 'nemesis', idempotencyKey: `${name}-credit` },
      rateLimitPerMinute: 100_000,
    });
  const plain: Customer[] = [];
  const limited: Customer[] = [];
  const poor: Customer[] = [];
  for (let index = 0; index < PLAIN_ACCOUNTS; index += 1) {
    const account = await open(`nemesis-${seed}-${index}`, PLAIN_CREDIT_DZD);
    const creditMicroDzd = BigInt(PLAIN_CREDIT_DZD * MICRO_PER_DZD);
    plain.push({ ...account, keyName: 'k', creditMicroDzd });
    if (index >= LIMITED_KEYS) continue;
    const apiKey = await limitedKey(operator, account.accountId);
    limited.push({ accountId: account.accountId, apiKey, keyName: 'limited', creditMicroDzd });
  }
  for (let index = 0; index < POOR_ACCOUNTS; index += 1) {
    const account = await open(`nemesis-${seed}-poor-${index}`, POOR_CREDIT_DZD);
    poor.push({
      ...account,
      keyName: 'k',
      creditMicroDzd: BigInt(POOR_CREDIT_DZD * MICRO_PER_DZD),
    });
  }
  return { plain, limited, poor };
}
