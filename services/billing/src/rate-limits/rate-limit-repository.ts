/**
 * The rate limits' statements, through Prisma: the account's one-minute windows
 * (`rate_limit_windows`) and an API key's or scoped token's own limits
 * (columns of their rows) and windows (`key_request_windows`, `key_token_windows` less
 * `key_token_returns`; migration 20270115090000). Admission counts in its own statement
 * (billing_admit_batch_v1); these serve the routes that place no hold, `GET /v1/key`, the operator API
 * and the prune job.
 */
import type { PrismaClient } from '../db/client.js';

/** Whose limits: an API key by name, or a registered scoped token by id. */
export type KeyLimitOwner = { apiKey: string } | { scopedTokenId: string };

/** A key's or token's own limits (null: none of its own). */
export interface KeyLimits {
  requestsPerMinute: number | null;
  tokensPerMinute: bigint | null;
}

/** One entry of an account's list: whose limits, and what they are. */
export interface ListedLimits {
  owner: KeyLimitOwner;
  limits: KeyLimits;
}

const LIMIT_COLUMNS = { requestsPerMinute: true, tokensPerMinute: true } as const;

/** Who a request counts against: the account, and the key and registered token if any. */
export interface RateSubject {
  accountId: string;
  /** The account's requests per minute. */
  limit: number;
  /** The API key used, or the key that signed the token: its own limits apply too. */
  apiKeyName?: string;
  /** A registered scoped token (null: none, or not registered yet): its own limits apply too. */
  tokenId?: string | null;
}

/** A window's count (after this request when counted) and its owner's limit (null: none). */
export interface OwnerWindow {
  limit: number | null;
  count: number;
}

export interface RequestCounts {
  account: number;
  key: OwnerWindow;
  token: OwnerWindow;
}

/** Tokens used in a window (counted less given back) and the owner's limit (null: none). */
export interface TokenWindows {
  key: { limit: bigint | null; used: bigint };
  token: { limit: bigint | null; used: bigint };
}

type CountRow = {
  account_count: number;
  key_id: string | null;
  key_limit: number | null;
  token_id: string | null;
  token_limit: number | null;
};

type ReadRow = {
  account_count: number | null;
  key_limit: number | null;
  key_count: number | null;
  token_limit: number | null;
  token_count: number | null;
  key_tokens_limit: bigint | null;
  key_tokens_used: bigint | null;
  token_tokens_limit: bigint | null;
  token_tokens_used: bigint | null;
};

export class RateLimitRepository {
  readonly #prisma: PrismaClient;

  constructor(prisma: PrismaClient) {
    this.#prisma = prisma;
  }

  /**
   * Counts one request in the account's window and, when they have a limit of their own, the
   * key's and the token's; returns the counts after it. One statement when neither has one.
   */
  async count(subject: RateSubject, windowStartMs: number): Promise<RequestCounts> {
    const start = BigInt(windowStartMs);
    const rows = await this.#prisma.$queryRaw<CountRow[]>`
      WITH acc AS (
        INSERT INTO rate_limit_windows AS w (account_id, window_start_ms, count)
        VALUES (${subject.accountId}, ${start}, 1)
        ON CONFLICT (account_id, window_start_ms) DO UPDATE SET count = w.count + 1
        RETURNING w.count)
      SELECT acc.count AS account_count, k.id AS key_id, k.requests_per_minute AS key_limit,
             t.id AS token_id, t.requests_per_minute AS token_limit
        FROM acc
        LEFT JOIN api_keys k ON k.account_id = ${subject.accountId}
                            AND k.name = ${subject.apiKeyName ?? null}
        LEFT JOIN scoped_tokens t ON t.id = ${subject.tokenId ?? null}`;
    const row = rows[0];
    if (!row) throw new Error('rate limit upsert returned no row');
    const owner = async (id: string | null, limit: number | null): Promise<OwnerWindow> => {
      if (id === null || limit === null) return { limit: null, count: 0 };
      const [counted] = await this.#prisma.$queryRaw<{ count: number }[]>`
        SELECT billing_count_key_request(${id}, ${start}) AS count`;
      return { limit, count: counted?.count ?? 0 };
    };
    return {
      account: row.account_count,
      key: await owner(row.key_id, row.key_limit),
      token: await owner(row.token_id, row.token_limit),
    };
  }

  /** The windows' counts and tokens so far, without counting anything. */
  async read(
    subject: RateSubject,
    windowStartMs: number,
  ): Promise<RequestCounts & { tokens: TokenWindows }> {
    const start = BigInt(windowStartMs);
    const rows = await this.#prisma.$queryRaw<ReadRow[]>`
      SELECT (SELECT w.count FROM rate_limit_windows w
               WHERE w.account_id = ${subject.accountId} AND w.window_start_ms = ${start})
               AS account_count,
             k.requests_per_minute AS key_limit,
             (SELECT w.count FROM key_request_windows w
               WHERE w.owner_id = k.id AND w.window_start_ms = ${start}) AS key_count,
             t.requests_per_minute AS token_limit,
             (SELECT w.count FROM key_request_windows w
               WHERE w.owner_id = t.id AND w.window_start_ms = ${start}) AS token_count,
             k.tokens_per_minute AS key_tokens_limit,
             (COALESCE((SELECT w.tokens FROM key_token_windows w
                         WHERE w.owner_id = k.id AND w.window_start_ms = ${start}), 0)
              - COALESCE((SELECT sum(r.tokens) FROM key_token_returns r
                           WHERE r.owner_id = k.id AND r.window_start_ms = ${start}), 0))::bigint AS key_tokens_used,
             t.tokens_per_minute AS token_tokens_limit,
             (COALESCE((SELECT w.tokens FROM key_token_windows w
                         WHERE w.owner_id = t.id AND w.window_start_ms = ${start}), 0)
              - COALESCE((SELECT sum(r.tokens) FROM key_token_returns r
                           WHERE r.owner_id = t.id AND r.window_start_ms = ${start}), 0))::bigint AS token_tokens_used
        FROM (SELECT 1) AS one
        LEFT JOIN api_keys k ON k.account_id = ${subject.accountId}
                            AND k.name = ${subject.apiKeyName ?? null}
        LEFT JOIN scoped_tokens t ON t.id = ${subject.tokenId ?? null}`;
    const row = rows[0];
    const window = (limit: number | null, count: number | null): OwnerWindow => ({
      limit,
      count: count ?? 0,
    });
    return {
      account: row?.account_count ?? 0,
      key: window(row?.key_limit ?? null, row?.key_count ?? null),
      token: window(row?.token_limit ?? null, row?.token_count ?? null),
      tokens: {
        key: { limit: row?.key_tokens_limit ?? null, used: row?.key_tokens_used ?? 0n },
        token: { limit: row?.token_tokens_limit ?? null, used: row?.token_tokens_used ?? 0n },
      },
    };
  }

  /** The owner's limits; null when the account has no such key or registered token. */
  async readLimits(accountId: string, owner: KeyLimitOwner): Promise<KeyLimits | null> {
    return 'apiKey' in owner
      ? this.#prisma.apiKey.findUnique({
          where: { accountId_name: { accountId, name: owner.apiKey } },
          select: LIMIT_COLUMNS,
        })
      : this.#prisma.scopedToken.findFirst({
          where: { id: owner.scopedTokenId, accountId },
          select: LIMIT_COLUMNS,
        });
  }

  /**
   * The account's keys (by name) and then registered tokens (by id) with a limit of their own,
   * at most `limit` in all.
   */
  async listLimits(accountId: string, limit: number): Promise<ListedLimits[]> {
    const where = {
      accountId,
      OR: [{ requestsPerMinute: { not: null } }, { tokensPerMinute: { not: null } }],
    };
    const keys = await this.#prisma.apiKey.findMany({
      where,
      select: { name: true, ...LIMIT_COLUMNS },
      orderBy: { name: 'asc' },
      take: limit,
    });
    const tokens =
      keys.length < limit
        ? await this.#prisma.scopedToken.findMany({
            where,
            select: { id: true, ...LIMIT_COLUMNS },
            orderBy: { id: 'asc' },
            take: limit - keys.length,
          })
        : [];
    return [
      ...keys.map(({ name, ...limits }) => ({ owner: { apiKey: name }, limits })),
      ...tokens.map(({ id, ...limits }) => ({ owner: { scopedTokenId: id }, limits })),
    ];
  }

  /** Replaces the owner's limits; false when the account has no such key or registered token. */
  async writeLimits(accountId: string, owner: KeyLimitOwner, limits: KeyLimits): Promise<boolean> {
    const { count } =
      'apiKey' in owner
        ? await this.#prisma.apiKey.updateMany({
            where: { accountId, name: owner.apiKey },
            data: limits,
          })
        : await this.#prisma.scopedToken.updateMany({
            where: { id: owner.scopedTokenId, accountId },
            data: limits,
          });
    return count > 0;
  }

  /** Deletes this account's windows that start before `beforeMs`. */
  async pruneAccount(accountId: string, beforeMs: number): Promise<void> {
    await this.#prisma.$executeRaw`
      DELETE FROM rate_limit_windows
      WHERE account_id = ${accountId} AND window_start_ms < ${BigInt(beforeMs)}`;
  }

  /** Deletes at most `limit` rows of each counter table that start before `beforeMs`. */
  async prune(beforeMs: number, limit: number): Promise<number> {
    const before = BigInt(beforeMs);
    const counts = await Promise.all(
      ['rate_limit_windows', 'key_request_windows', 'key_token_windows', 'key_token_returns'].map(
        (table) =>
          this.#prisma.$executeRawUnsafe(
            // Table names from the list above, never from input.
            `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
               SELECT ctid FROM ${table} WHERE window_start_ms < $1 LIMIT $2))`,
            before,
            limit,
          ),
      ),
    );
    return counts.reduce((sum, n) => sum + n, 0);
  }
}
