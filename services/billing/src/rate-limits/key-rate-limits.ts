/**
 * Per-key rate limits: set, read and removed by the operator API; enforced
 * by admission (billing_admit_batch_v1, its requests step) and the routes that place no hold (rate-limit.ts). The limits
 * live on the key's and the token's own rows, which admission reads anyway: no extra lookup on
 * the request path.
 */
import { GatewayError, KEY_RATE_LIMITS } from '@gateway/contracts';
import type {
  KeyRateLimitList,
  KeyRateLimitPutRequest,
  KeyRateLimitView,
} from '@gateway/contracts';
import type { KeyLimitOwner, KeyLimits, RateLimitRepository } from './rate-limit-repository.js';

export type { KeyLimitOwner } from './rate-limit-repository.js';

export class KeyRateLimits {
  readonly #repository: RateLimitRepository;

  constructor(repository: RateLimitRepository) {
    this.#repository = repository;
  }

  async get(accountId: string, owner: KeyLimitOwner): Promise<KeyRateLimitView> {
    const limits = await this.#repository.readLimits(accountId, owner);
    if (!limits) throw notFound(accountId, owner);
    return view(owner, limits);
  }

  /** The account's keys and registered tokens with a limit of their own (account not checked). */
  async list(accountId: string): Promise<KeyRateLimitList> {
    const listed = await this.#repository.listLimits(accountId, KEY_RATE_LIMITS.listedMax);
    return { object: 'list', data: listed.map(({ owner, limits }) => view(owner, limits)) };
  }

  /** Replaces both limits (an omitted one is removed). */
  async put(
    accountId: string,
    owner: KeyLimitOwner,
    body: KeyRateLimitPutRequest,
  ): Promise<KeyRateLimitView> {
    return this.#set(accountId, owner, {
      requestsPerMinute: body.requests_per_minute ?? null,
      tokensPerMinute: tokensOf(body.tokens_per_minute ?? null),
    });
  }

  async remove(accountId: string, owner: KeyLimitOwner): Promise<void> {
    await this.#set(accountId, owner, { requestsPerMinute: null, tokensPerMinute: null });
  }

  async #set(accountId: string, owner: KeyLimitOwner, limits: KeyLimits) {
    if (!(await this.#repository.writeLimits(accountId, owner, limits))) {
      throw notFound(accountId, owner);
    }
    return view(owner, limits);
  }
}

function tokensOf(value: number | null): bigint | null {
  if (value === null) return null;
  // The contract bounds it; checked again because the database's CHECK would answer 500.
  if (!Number.isSafeInteger(value) || value < 1 || value > KEY_RATE_LIMITS.tokensPerMinuteMax) {
    throw new GatewayError('invalid_request_body', 'tokens_per_minute is out of range', {
      param: 'tokens_per_minute',
    });
  }
  return BigInt(value);
}

function view(owner: KeyLimitOwner, limits: KeyLimits): KeyRateLimitView {
  return {
    object: 'rate_limit',
    applies_to: 'apiKey' in owner ? 'api_key' : 'scoped_token',
    owner: 'apiKey' in owner ? owner.apiKey : owner.scopedTokenId,
    requests_per_minute: limits.requestsPerMinute,
    tokens_per_minute: limits.tokensPerMinute === null ? null : Number(limits.tokensPerMinute),
  };
}

// A client-minted token has no id before its first request registers it.
const notFound = (accountId: string, owner: KeyLimitOwner) =>
  new GatewayError(
    'resource_not_found',
    'apiKey' in owner
      ? `API key '${owner.apiKey}' of account ${accountId} not found`
      : `Scoped token ${owner.scopedTokenId} of account ${accountId} not found`,
  );
