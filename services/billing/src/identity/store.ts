import type {
  Account,
  AccountStatus,
  ApiKeyRecord,
  ApiKeySummary,
  CatalogModel,
  ScopedTokenRecord,
  SealedSecret,
  WebhookFormat,
} from './types.js';

/**
 * The persistence port of the identity part. The domain modules depend on this interface only;
 * `prisma-store.ts` implements it (the one place Prisma is used). `Tx` is the store's
 * transaction handle: methods that take an optional `tx` run inside that transaction when given.
 */
export interface IdentityStore<Tx> {
  // --- transactions ---
  /** Runs `fn` in one READ COMMITTED transaction; a throw rolls everything back. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` inside a savepoint of `tx`: when `fn` throws, its writes are rolled back to the
   * savepoint and the error is rethrown, but the transaction stays usable.
   */
  savepoint<T>(tx: Tx, fn: () => Promise<T>): Promise<T>;

  // --- accounts ---
  /** Inserts the account and its zeroed balance row, atomically. */
  createAccount(account: { id: string; name: string; createdAt: Date }): Promise<Account>;
  findAccount(id: string): Promise<Account | null>;
  /** Ordered by (createdAt, id); `after` is exclusive. */
  listAccounts(query: {
    search?: string;
    limit: number;
    after?: { createdAt: Date; id: string };
  }): Promise<Account[]>;
  /** null when the account does not exist. */
  updateAccount(
    id: string,
    changes: { status?: AccountStatus; rateLimitPerMinute?: number; webhookFormat?: WebhookFormat },
  ): Promise<Account | null>;

  // --- API keys ---
  /** 'name_taken' when the account already has a key of that name. */
  /** `limit_reached`: the account already has `maxPerAccount` keys (exact under concurrency). */
  insertApiKey(
    key: ApiKeyRecord,
    maxPerAccount: number,
  ): Promise<'created' | 'name_taken' | 'limit_reached'>;
  /** Replaces digest and sealed secret in place; false when no such key. */
  replaceApiKey(
    accountId: string,
    name: string,
    replacement: { keyDigest: string; secret: SealedSecret },
  ): Promise<boolean>;
  /** false when no such key. */
  deleteApiKey(accountId: string, name: string): Promise<boolean>;
  listApiKeys(accountId: string): Promise<ApiKeySummary[]>;
  findApiKeyByDigest(keyDigest: string): Promise<{ key: ApiKeyRecord; account: Account } | null>;
  findApiKeyByName(
    accountId: string,
    name: string,
  ): Promise<{ key: ApiKeyRecord; account: Account } | null>;

  // --- scoped tokens ---
  insertScopedToken(token: ScopedTokenRecord): Promise<void>;
  /** Inserts unless a token with the same digest exists; returns the stored row either way. */
  registerScopedToken(token: ScopedTokenRecord, tx?: Tx): Promise<ScopedTokenRecord>;
  /**
   * Deletes at most `limit` tokens that expired before `before` and that no hold names (holds
   * keep the token id for finance); returns how many.
   */
  purgeExpiredScopedTokens(before: Date, limit: number): Promise<number>;
  findScopedTokenByDigest(digest: string): Promise<ScopedTokenRecord | null>;
  /** Sets revokedAt unless already set; returns the row (null when no such digest). */
  revokeScopedToken(digest: string, at: Date): Promise<ScopedTokenRecord | null>;

  // --- catalog ---
  upsertModel(model: Omit<CatalogModel, 'updatedAt'>): Promise<CatalogModel>;
  findModel(id: string, tx?: Tx): Promise<CatalogModel | null>;
  listModels(): Promise<CatalogModel[]>;

  // --- rate limit ---
  /** Atomic increment of the (account, window) counter; returns the count after it. */
  incrementRateWindow(accountId: string, windowStartMs: number, tx?: Tx): Promise<number>;
  /** The window's count so far (0 when it has none), without counting. */
  readRateWindow(accountId: string, windowStartMs: number): Promise<number>;
  /** Deletes this account's windows that start before `beforeMs`. */
  pruneAccountRateWindows(accountId: string, beforeMs: number, tx?: Tx): Promise<number>;
  /** Deletes at most `limit` windows (any account) that start before `beforeMs`. */
  pruneRateWindows(beforeMs: number, limit: number): Promise<number>;
}
