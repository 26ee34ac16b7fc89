import type { Keyring } from '@gateway/crypto';
import { GatewayError, LIMITS } from '@gateway/contracts';
import type { IssuedApiKey, OperatorAccount } from '@gateway/contracts';
import { API_KEY_NAME_PATTERN } from './jwt.js';
import {
  apiKeySecretAad,
  generateApiKey,
  newAccountId,
  newApiKeyId,
  sha256Hex,
} from './secrets.js';
import type { IdentityRepository } from './identity-repository.js';
import type { Account, ApiKeySummary, Clock, WebhookFormat } from './types.js';

export const ACCOUNT_NAME_MAX_LENGTH = 200;
export const RATE_LIMIT_PER_MINUTE_MIN = 1;
export const RATE_LIMIT_PER_MINUTE_MAX = 100_000;
export const ACCOUNTS_PAGE_DEFAULT = 50;
export const ACCOUNTS_PAGE_MAX = 200;

export interface AccountPatch {
  rateLimitPerMinute?: number;
  webhookFormat?: WebhookFormat;
}

export interface AccountPage {
  accounts: Account[];
  /** Opaque; pass back as `cursor` for the next page. null on the last page. */
  nextCursor: string | null;
}

const invalid = (message: string, param: string) =>
  new GatewayError('invalid_request_body', message, { param });

const accountNotFound = (id: string) =>
  new GatewayError('resource_not_found', `Account ${id} not found`);

/**
 * Accounts and their API keys (operator API, decisions §4). Every method throws GatewayError for
 * client-visible failures: `invalid_request_body` (with `param`), `resource_not_found`,
 * `conflict`.
 */
export class AccountService {
  readonly #store: IdentityRepository;
  readonly #box: Keyring;
  readonly #clock: Clock;

  constructor(deps: { store: IdentityRepository; keyring: Keyring; clock: Clock }) {
    this.#store = deps.store;
    this.#box = deps.keyring;
    this.#clock = deps.clock;
  }

  /** New active account with the defaults (100 requests/min, webhook format A) and a zero balance. */
  async create(input: { name: unknown }): Promise<Account> {
    const name = accountName(input.name);
    return this.#store.createAccount({ id: newAccountId(), name, createdAt: this.#clock() });
  }

  async get(id: string): Promise<Account> {
    const account = await this.#store.findAccount(id);
    if (!account) throw accountNotFound(id);
    return account;
  }

  /** `search`: an exact account id or a part of the name (case-insensitive). */
  async list(
    query: { limit?: number; cursor?: string; search?: string } = {},
  ): Promise<AccountPage> {
    const limit = query.limit ?? ACCOUNTS_PAGE_DEFAULT;
    if (!Number.isInteger(limit) || limit < 1 || limit > ACCOUNTS_PAGE_MAX) {
      throw invalid(`limit must be an integer from 1 to ${ACCOUNTS_PAGE_MAX}`, 'limit');
    }
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    // One extra row tells whether another page follows.
    const search = query.search?.trim().slice(0, ACCOUNT_NAME_MAX_LENGTH);
    const rows = await this.#store.listAccounts({
      limit: limit + 1,
      ...(after ? { after } : {}),
      ...(search ? { search } : {}),
    });
    const accounts = rows.slice(0, limit);
    const last = accounts[accounts.length - 1];
    return {
      accounts,
      nextCursor: rows.length > limit && last ? encodeCursor(last) : null,
    };
  }

  suspend(id: string): Promise<Account> {
    return this.#update(id, { status: 'suspended' });
  }

  unsuspend(id: string): Promise<Account> {
    return this.#update(id, { status: 'active' });
  }

  async patch(id: string, patch: AccountPatch): Promise<Account> {
    const changes: AccountPatch = {};
    if (patch.rateLimitPerMinute !== undefined) {
      const value: unknown = patch.rateLimitPerMinute;
      if (
        typeof value !== 'number' ||
        !Number.isInteger(value) ||
        value < RATE_LIMIT_PER_MINUTE_MIN ||
        value > RATE_LIMIT_PER_MINUTE_MAX
      ) {
        throw invalid(
          `rate_limit_per_minute must be an integer from ${RATE_LIMIT_PER_MINUTE_MIN} to ${RATE_LIMIT_PER_MINUTE_MAX}`,
          'rate_limit_per_minute',
        );
      }
      changes.rateLimitPerMinute = value;
    }
    if (patch.webhookFormat !== undefined) {
      const value: unknown = patch.webhookFormat;
      if (value !== 'A' && value !== 'B') {
        throw invalid('webhook_format must be one of: A, B', 'webhook_format');
      }
      changes.webhookFormat = value;
    }
    return this.#update(id, changes);
  }

  async #update(id: string, changes: Parameters<IdentityRepository['updateAccount']>[1]) {
    const account =
      Object.keys(changes).length === 0
        ? await this.#store.findAccount(id)
        : await this.#store.updateAccount(id, changes);
    if (!account) throw accountNotFound(id);
    return account;
  }

  // --- API keys ---

  /**
   * A new named key (`key` is shown once and never stored in clear); 409 `conflict` when the account already has a key of that name, or already
   * has `LIMITS.apiKeysPerAccountMax` keys.
   */
  async createApiKey(accountId: string, input: { name: unknown }): Promise<IssuedApiKey> {
    const name = apiKeyName(input.name);
    await this.get(accountId);
    const key = generateApiKey();
    const outcome = await this.#store.insertApiKey(
      {
        id: newApiKeyId(),
        accountId,
        name,
        keyDigest: sha256Hex(key),
        secret: this.#box.seal(key, apiKeySecretAad(accountId, name)),
        createdAt: this.#clock(),
      },
      LIMITS.apiKeysPerAccountMax,
    );
    if (outcome === 'name_taken') {
      throw new GatewayError('conflict', `API key '${name}' already exists`, { param: 'name' });
    }
    if (outcome === 'limit_reached') {
      throw new GatewayError(
        'conflict',
        `An account has at most ${LIMITS.apiKeysPerAccountMax} API keys; delete one first`,
        { param: 'name' },
      );
    }
    return { name, key };
  }

  /**
   * Replaces the key's value (and so its HS256 secret) in place. The old key stops working at
   * once, and so do all scoped tokens it signed (their signatures no longer verify).
   */
  async regenerateApiKey(accountId: string, name: string): Promise<IssuedApiKey> {
    const key = generateApiKey();
    const replaced = await this.#store.replaceApiKey(accountId, name, {
      keyDigest: sha256Hex(key),
      secret: this.#box.seal(key, apiKeySecretAad(accountId, name)),
    });
    if (!replaced) throw await this.#keyNotFound(accountId, name);
    return { name, key };
  }

  /** Deletes the key; it and the scoped tokens it signed stop working at once. */
  async deleteApiKey(accountId: string, name: string): Promise<void> {
    if (!(await this.#store.deleteApiKey(accountId, name))) {
      throw await this.#keyNotFound(accountId, name);
    }
  }

  /**
   * The key's list of models (sorted; empty: any model). It also bounds the scoped tokens the
   * key signs; admission's model step enforces it.
   */
  async apiKeyModels(accountId: string, name: string): Promise<string[]> {
    const models = await this.#store.findApiKeyModels(accountId, name);
    if (models === null) throw await this.#keyNotFound(accountId, name);
    return [...models].sort();
  }

  /** Replaces the key's list of models (the contract bounds and de-duplicates it). */
  async setApiKeyModels(accountId: string, name: string, models: string[]): Promise<string[]> {
    const sorted = [...new Set(models)].sort();
    if (!(await this.#store.updateApiKeyModels(accountId, name, sorted))) {
      throw await this.#keyNotFound(accountId, name);
    }
    return sorted;
  }

  /** Names and creation times only. */
  async listApiKeys(accountId: string): Promise<ApiKeySummary[]> {
    await this.get(accountId);
    return this.#store.listApiKeys(accountId);
  }

  async #keyNotFound(accountId: string, name: string): Promise<GatewayError> {
    await this.get(accountId); // an unknown account is reported as such
    return new GatewayError('resource_not_found', `API key '${name}' not found`);
  }
}

function accountName(value: unknown): string {
  if (typeof value !== 'string') throw invalid('name must be a string', 'name');
  const name = value.trim();
  if (name.length === 0 || name.length > ACCOUNT_NAME_MAX_LENGTH || hasControlCharacter(name)) {
    throw invalid(
      `name must be 1 to ${ACCOUNT_NAME_MAX_LENGTH} characters without control characters`,
      'name',
    );
  }
  return name;
}

function hasControlCharacter(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

function apiKeyName(value: unknown): string {
  if (typeof value !== 'string' || !API_KEY_NAME_PATTERN.test(value)) {
    throw invalid('name must be 1 to 64 characters from A-Z, a-z, 0-9, ".", "_" and "-"', 'name');
  }
  return value;
}

function encodeCursor(account: Account): string {
  return Buffer.from(JSON.stringify([account.createdAt.getTime(), account.id])).toString(
    'base64url',
  );
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      Number.isSafeInteger(parsed[0]) &&
      typeof parsed[1] === 'string'
    ) {
      return { createdAt: new Date(parsed[0] as number), id: parsed[1] };
    }
  } catch {
    // reported below
  }
  throw invalid('cursor is not valid', 'cursor');
}

/** An account as the operator API renders it (balances come from the ledger). */
export function accountToJson(account: Account): OperatorAccount {
  return {
    id: account.id,
    name: account.name,
    status: account.status,
    rate_limit_per_minute: account.rateLimitPerMinute,
    webhook_format: account.webhookFormat,
    created_at: account.createdAt.toISOString(),
  };
}
