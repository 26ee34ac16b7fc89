import { randomUUID } from 'node:crypto';

/**
 * A call to the operator API from a test: `path` is relative to the API's root (`/accounts`),
 * whichever server it is reached on (billing's internal `/internal/v1/admin`, edge's public
 * `/admin/v1`); resolves with the parsed JSON answer, rejects on an error status.
 */
export type OperatorCall = <T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<T>;

export interface FundAccountOptions {
  /** Default: a unique `acct-…`. */
  name?: string;
  /** The API key's name; `auto` by default. */
  keyName?: string;
  /** Credited once the key exists; 10 by default, none when 0. */
  creditDzd?: number;
  /** The account's own requests-per-minute limit (the default otherwise). */
  rateLimitPerMinute?: number;
  /** The credit's `Idempotency-Key` and reference. */
  credit?: { idempotencyKey?: string; reference?: string };
}

export interface FundedAccount {
  accountId: string;
  apiKey: string;
}

/**
 * The one way tests fund an account: over the operator API, as an operator does (an account, an
 * API key, a credit, and the account's limit if asked). Each test stack hands it its own way to
 * reach that API (`operator`); nothing writes the ledger behind billing's back.
 */
export async function fundAccount(
  operator: OperatorCall,
  options: FundAccountOptions = {},
): Promise<FundedAccount> {
  const account = await operator<{ id: string }>('POST', '/accounts', {
    name: options.name ?? `acct-${randomUUID()}`,
  });
  if (options.rateLimitPerMinute !== undefined) {
    await operator('PATCH', `/accounts/${account.id}`, {
      rate_limit_per_minute: options.rateLimitPerMinute,
    });
  }
  const { key } = await operator<{ key: string }>('POST', `/accounts/${account.id}/api-keys`, {
    name: options.keyName ?? 'auto',
  });
  const creditDzd = options.creditDzd ?? 10;
  if (creditDzd > 0) {
    const idempotencyKey = options.credit?.idempotencyKey;
    await operator(
      'POST',
      `/accounts/${account.id}/credits`,
      { amount_dzd: creditDzd, reference: options.credit?.reference ?? 'test' },
      idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey },
    );
  }
  return { accountId: account.id, apiKey: key };
}
