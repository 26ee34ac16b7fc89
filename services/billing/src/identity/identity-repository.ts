import type { InputModality } from '@gateway/contracts';
import { Prisma } from '../db/client.js';
import type { PrismaClient } from '../db/client.js';
import type {
  Account,
  AccountStatus,
  ApiKeyRecord,
  ApiKeySummary,
  ModelRecord,
  ModelNode,
  ScopedTokenRecord,
  SealedSecret,
  WebhookFormat,
} from './types.js';

/** The Prisma transaction handle the identity repository runs in. */
export type PrismaTx = Prisma.TransactionClient;

const TRANSACTION_OPTIONS = {
  // Prisma 6.19 + adapter-pg leaks a pooled connection when COMMIT itself fails (as a
  // serialization failure would): READ COMMITTED with row locks instead of SERIALIZABLE.
  isolationLevel: Prisma.TransactionIsolationLevel.ReadCommitted,
  maxWait: 5_000,
  timeout: 10_000,
} as const;

type AccountRow = {
  id: string;
  name: string;
  status: AccountStatus;
  rateLimitPerMinute: number;
  webhookFormat: WebhookFormat;
  createdAt: Date;
};

type ApiKeyRow = {
  id: string;
  accountId: string;
  name: string;
  keyDigest: string;
  secretCiphertext: Uint8Array;
  secretNonce: Uint8Array;
  secretAuthTag: Uint8Array;
  secretKeyVersion: number;
  createdAt: Date;
};

type ScopedTokenRow = Omit<ScopedTokenRecord, 'models'> & { models: string[] };

type ModelRow = Omit<ModelRecord, 'nodes' | 'inputModalities'> & {
  nodes: Prisma.JsonValue;
  inputModalities: string[];
};

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  status: row.status,
  rateLimitPerMinute: row.rateLimitPerMinute,
  webhookFormat: row.webhookFormat,
  createdAt: row.createdAt,
});

const toApiKey = (row: ApiKeyRow): ApiKeyRecord => ({
  id: row.id,
  accountId: row.accountId,
  name: row.name,
  keyDigest: row.keyDigest,
  secret: {
    ciphertext: row.secretCiphertext,
    nonce: row.secretNonce,
    tag: row.secretAuthTag,
    keyVersion: row.secretKeyVersion,
  },
  createdAt: row.createdAt,
});

const toScopedToken = (row: ScopedTokenRow): ScopedTokenRecord => ({
  id: row.id,
  digest: row.digest,
  accountId: row.accountId,
  apiKeyName: row.apiKeyName,
  models: row.models.length === 0 ? null : row.models,
  expiresAt: row.expiresAt,
  spendingLimitMicroDzd: row.spendingLimitMicroDzd,
  spentMicroDzd: row.spentMicroDzd,
  reservedMicroDzd: row.reservedMicroDzd,
  revokedAt: row.revokedAt,
  origin: row.origin,
  createdAt: row.createdAt,
});

const apiKeyRow = (key: ApiKeyRecord) => ({
  id: key.id,
  accountId: key.accountId,
  name: key.name,
  keyDigest: key.keyDigest,
  secretCiphertext: bytes(key.secret.ciphertext),
  secretNonce: bytes(key.secret.nonce),
  secretAuthTag: bytes(key.secret.tag),
  secretKeyVersion: key.secret.keyVersion,
  createdAt: key.createdAt,
});

const toModel = (row: ModelRow): ModelRecord => ({
  id: row.id,
  kind: row.kind,
  provider: row.provider,
  protocol: row.protocol,
  upstreamModel: row.upstreamModel,
  inputPriceMicroDzdPerM: row.inputPriceMicroDzdPerM,
  outputPriceMicroDzdPerM: row.outputPriceMicroDzdPerM,
  maxOutputTokens: row.maxOutputTokens,
  // Validated on the way in (catalog.ts); stored as a JSON array.
  nodes: (Array.isArray(row.nodes) ? row.nodes : []) as unknown as ModelNode[],
  // Checked by the column's constraint on the way in.
  inputModalities: row.inputModalities as InputModality[],
  imageTokens: row.imageTokens,
  remoteImages: row.remoteImages,
  updatedAt: row.updatedAt,
});

const bytes = (value: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(value);

function isKnownError(error: unknown, code: string): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === code;
}

/**
 * The identity part's repository: accounts, API keys, scoped tokens, the catalog and rate-limit
 * windows, over Prisma, for the domain classes (accounts, scoped tokens, authentication,
 * catalog, rate limit). The request path's statements (admission, signing keys, last use) are
 * plain `pg`, in admission-repository.ts.
 */
export class IdentityRepository {
  readonly #prisma: PrismaClient;

  constructor(prisma: PrismaClient) {
    this.#prisma = prisma;
  }

  /** Runs `fn` in one READ COMMITTED transaction; a throw rolls everything back. */
  transaction<T>(fn: (tx: PrismaTx) => Promise<T>): Promise<T> {
    return this.#prisma.$transaction(fn, TRANSACTION_OPTIONS);
  }

  // --- accounts ---

  /** Inserts the account and its zeroed balance row, atomically. */
  async createAccount(account: { id: string; name: string; createdAt: Date }): Promise<Account> {
    const row = await this.#prisma.account.create({
      data: { ...account, balance: { create: {} } },
    });
    return toAccount(row);
  }

  async findAccount(id: string): Promise<Account | null> {
    const row = await this.#prisma.account.findUnique({ where: { id } });
    return row && toAccount(row);
  }

  /** Ordered by (createdAt, id); `after` is exclusive. */
  async listAccounts(query: {
    limit: number;
    after?: { createdAt: Date; id: string };
    search?: string;
  }): Promise<Account[]> {
    const { after, search } = query;
    const page = after
      ? {
          OR: [
            { createdAt: { gt: after.createdAt } },
            { createdAt: after.createdAt, id: { gt: after.id } },
          ],
        }
      : {};
    const matching = search
      ? { OR: [{ id: search }, { name: { contains: search, mode: 'insensitive' as const } }] }
      : {};
    const rows = await this.#prisma.account.findMany({
      where: { AND: [page, matching] },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: query.limit,
    });
    return rows.map(toAccount);
  }

  /** null when the account does not exist. */
  async updateAccount(
    id: string,
    changes: { status?: AccountStatus; rateLimitPerMinute?: number; webhookFormat?: WebhookFormat },
  ): Promise<Account | null> {
    try {
      return toAccount(await this.#prisma.account.update({ where: { id }, data: changes }));
    } catch (error) {
      if (isKnownError(error, 'P2025')) return null;
      throw error;
    }
  }

  // --- API keys ---

  /** 'name_taken' when the account already has a key of that name. */
  /** `limit_reached`: the account already has `maxPerAccount` keys (exact under concurrency). */
  async insertApiKey(
    key: ApiKeyRecord,
    maxPerAccount: number,
  ): Promise<'created' | 'name_taken' | 'limit_reached'> {
    try {
      return await this.#prisma.$transaction(async (tx) => {
        // The account's row lock serialises its key creations: the count below is exact even
        // when creations race (two edge replicas, two browser tabs).
        await tx.$queryRaw`SELECT 1 FROM accounts WHERE id = ${key.accountId} FOR UPDATE`;
        const existing = await tx.apiKey.count({ where: { accountId: key.accountId } });
        if (existing >= maxPerAccount) return 'limit_reached' as const;
        await tx.apiKey.create({ data: apiKeyRow(key) });
        return 'created' as const;
      }, TRANSACTION_OPTIONS);
    } catch (error) {
      if (isKnownError(error, 'P2002')) return 'name_taken';
      throw error;
    }
  }

  /** Replaces digest and sealed secret in place; false when no such key. */
  async replaceApiKey(
    accountId: string,
    name: string,
    replacement: { keyDigest: string; secret: SealedSecret },
  ): Promise<boolean> {
    const { count } = await this.#prisma.apiKey.updateMany({
      where: { accountId, name },
      data: {
        keyDigest: replacement.keyDigest,
        secretCiphertext: bytes(replacement.secret.ciphertext),
        secretNonce: bytes(replacement.secret.nonce),
        secretAuthTag: bytes(replacement.secret.tag),
        secretKeyVersion: replacement.secret.keyVersion,
      },
    });
    return count > 0;
  }

  /** false when no such key. */
  async deleteApiKey(accountId: string, name: string): Promise<boolean> {
    const { count } = await this.#prisma.apiKey.deleteMany({ where: { accountId, name } });
    return count > 0;
  }

  /** null when no such key. */
  async findApiKeyModels(accountId: string, name: string): Promise<string[] | null> {
    const row = await this.#prisma.apiKey.findUnique({
      where: { accountId_name: { accountId, name } },
      select: { models: true },
    });
    return row?.models ?? null;
  }

  /** false when no such key. */
  async updateApiKeyModels(accountId: string, name: string, models: string[]): Promise<boolean> {
    const { count } = await this.#prisma.apiKey.updateMany({
      where: { accountId, name },
      data: { models },
    });
    return count > 0;
  }

  async listApiKeys(accountId: string): Promise<ApiKeySummary[]> {
    return this.#prisma.apiKey.findMany({
      where: { accountId },
      select: { name: true, createdAt: true, lastUsedAt: true },
      orderBy: { name: 'asc' },
    });
  }

  async findApiKeyByDigest(
    keyDigest: string,
  ): Promise<{ key: ApiKeyRecord; account: Account } | null> {
    const row = await this.#prisma.apiKey.findUnique({
      where: { keyDigest },
      include: { account: true },
    });
    return row && { key: toApiKey(row), account: toAccount(row.account) };
  }

  async findApiKeyByName(
    accountId: string,
    name: string,
  ): Promise<{ key: ApiKeyRecord; account: Account } | null> {
    const row = await this.#prisma.apiKey.findUnique({
      where: { accountId_name: { accountId, name } },
      include: { account: true },
    });
    return row && { key: toApiKey(row), account: toAccount(row.account) };
  }

  // --- scoped tokens ---

  #tokenData(token: ScopedTokenRecord) {
    return {
      id: token.id,
      digest: token.digest,
      accountId: token.accountId,
      apiKeyName: token.apiKeyName,
      models: token.models ?? [],
      expiresAt: token.expiresAt,
      spendingLimitMicroDzd: token.spendingLimitMicroDzd,
      spentMicroDzd: token.spentMicroDzd,
      reservedMicroDzd: token.reservedMicroDzd,
      revokedAt: token.revokedAt,
      origin: token.origin,
      createdAt: token.createdAt,
    };
  }

  async insertScopedToken(token: ScopedTokenRecord): Promise<void> {
    await this.#prisma.scopedToken.create({ data: this.#tokenData(token) });
  }

  /** Inserts unless a token with the same digest exists; returns the stored row either way. */
  async registerScopedToken(token: ScopedTokenRecord): Promise<ScopedTokenRecord> {
    // ON CONFLICT (digest) DO NOTHING: concurrent first uses of one token all end up here.
    await this.#prisma.scopedToken.createMany({
      data: [this.#tokenData(token)],
      skipDuplicates: true,
    });
    const row = await this.#prisma.scopedToken.findUniqueOrThrow({
      where: { digest: token.digest },
    });
    return toScopedToken(row);
  }

  /**
   * Deletes at most `limit` tokens that expired before `before` and that no hold names (holds
   * keep the token id for finance); returns how many.
   */
  async purgeExpiredScopedTokens(before: Date, limit: number): Promise<number> {
    return this.#prisma.$executeRaw`
      DELETE FROM scoped_tokens WHERE id IN (
        SELECT t.id FROM scoped_tokens t
        WHERE t.expires_at < ${before}
          AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.scoped_token_id = t.id)
        LIMIT ${limit})`;
  }

  async findScopedTokenByDigest(digest: string): Promise<ScopedTokenRecord | null> {
    const row = await this.#prisma.scopedToken.findUnique({ where: { digest } });
    return row && toScopedToken(row);
  }

  /** Sets revokedAt unless already set; returns the row (null when no such digest). */
  async revokeScopedToken(digest: string, at: Date): Promise<ScopedTokenRecord | null> {
    await this.#prisma.scopedToken.updateMany({
      where: { digest, revokedAt: null },
      data: { revokedAt: at },
    });
    return this.findScopedTokenByDigest(digest);
  }

  // --- catalog ---

  async upsertModel(model: Omit<ModelRecord, 'updatedAt'>): Promise<ModelRecord> {
    const data = {
      kind: model.kind,
      provider: model.provider,
      protocol: model.protocol,
      upstreamModel: model.upstreamModel,
      inputPriceMicroDzdPerM: model.inputPriceMicroDzdPerM,
      outputPriceMicroDzdPerM: model.outputPriceMicroDzdPerM,
      maxOutputTokens: model.maxOutputTokens,
      nodes: model.nodes as unknown as Prisma.InputJsonValue,
      inputModalities: model.inputModalities,
      imageTokens: model.imageTokens,
      remoteImages: model.remoteImages,
    };
    const row = await this.#prisma.model.upsert({
      where: { id: model.id },
      create: { id: model.id, ...data },
      update: data,
    });
    return toModel(row);
  }

  async findModel(id: string): Promise<ModelRecord | null> {
    const row = await this.#prisma.model.findUnique({ where: { id } });
    return row && toModel(row);
  }

  async listModels(): Promise<ModelRecord[]> {
    const rows = await this.#prisma.model.findMany({ orderBy: { id: 'asc' } });
    return rows.map(toModel);
  }
}
