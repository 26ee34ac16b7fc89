/**
 * Stored Responses state in PostgreSQL (plain `pg`, billing's pool): `stored_responses` (sealed
 * content) and `stored_response_items` (which response holds an item id), migrations
 * 20270119090000 and 20270122090000 (background responses). No business decision here beyond the reader rule, which every read states in
 * SQL so that a row the reader may not read never leaves the database with its content.
 *
 * Every read takes its parameters in one order: $1 account, $2 id(s), $3 now, $4 reader.
 */
import type pg from 'pg';
import type { SealedValue } from '@gateway/crypto';

/** A scoped token's digest (it reads only what it stored), or null: an API key (reads all). */
export type Reader = string | null;

/** The sealed columns, as `pg` returns them. */
export interface SealedColumns {
  ciphertext: Buffer;
  nonce: Buffer;
  tag: Buffer;
  key_version: number;
}

export interface StoredResponseRow extends SealedColumns {
  id: string;
  token_digest: string | null;
  previous_response_id: string | null;
  created_at: Date;
  expires_at: Date;
  /** A background response not finished yet. */
  in_progress: boolean;
}

/** A response as `find` reads it: with its job's hold (the same id) while it is in progress. */
export interface FoundResponseRow extends StoredResponseRow {
  hold_status: string | null;
  hold_finalized_at: Date | null;
}

/** A background response's result: its content replaced, its output item ids added. */
export interface FinishedStoredResponse {
  id: string;
  accountId: string;
  /** Who stored it: the content stays sealed to the same owner. */
  tokenDigest: string | null;
  sealed: SealedValue;
  contentBytes: number;
  itemIds: string[];
  /** The webhook event its end is (`response.<status>`), when it has a webhook. */
  webhookType: string;
  endedAt: Date;
}

/** A background response whose job ended long ago with no result stored. */
export type LostResponseRow = Pick<StoredResponseRow, 'id' | 'token_digest'> &
  SealedColumns & { account_id: string };

/** One link of a `previous_response_id` chain; content only when the whole chain may be read. */
export type ChainRow = Omit<StoredResponseRow, keyof SealedColumns> &
  NullableSealedColumns & {
    depth: number;
    readable: boolean;
    /** Content bytes of this link and every newer one. */
    total_bytes: string;
  };

/** A readable response holding some of the wanted items; content only within the budget. */
export type ItemHolderRow = NullableSealedColumns & {
  id: string;
  token_digest: string | null;
  item_ids: string[];
  /** Content bytes of every holder together. */
  total_bytes: string;
};

type NullableSealedColumns = { [K in keyof SealedColumns]: SealedColumns[K] | null };

export interface NewStoredResponse {
  id: string;
  accountId: string;
  tokenDigest: string | null;
  previousResponseId: string | null;
  sealed: SealedValue;
  contentBytes: number;
  createdAt: Date;
  expiresAt: Date;
  /** Ids of its input and output items, each once. */
  itemIds: string[];
  inProgress: boolean;
  /** A background response's webhook URL, sealed (response-webhooks.ts); null: none. */
  webhook: SealedValue | null;
}

export type InsertOutcome = 'stored' | 'duplicate' | 'previous_not_readable';

/** Rows the reader may read: not expired, and its own unless it is an API key. */
const readable = (row: string) =>
  `(${row}.expires_at > $3 AND ($4::text IS NULL OR ${row}.token_digest = $4))`;

// The response and its items in one statement (atomic without a transaction), and only when
// the previous response, if any, is readable by the same reader: the saver continues its own.
// Items already stored for the account keep their first response (DO NOTHING).
const INSERT = `
  WITH stored AS (
    INSERT INTO stored_responses (id, account_id, token_digest, previous_response_id, ciphertext,
                                  nonce, tag, key_version, content_bytes, created_at, expires_at,
                                  in_progress)
    SELECT $1::text, $2::text, $3::text, $4::text, $5::bytea, $6::bytea, $7::bytea, $8::int,
           $9::int, $10::timestamptz, $11::timestamptz, $13::boolean
     WHERE $4::text IS NULL OR EXISTS (
           SELECT 1 FROM stored_responses p
            WHERE p.id = $4 AND p.account_id = $2 AND p.expires_at > $10
              AND ($3::text IS NULL OR p.token_digest = $3))
    RETURNING id
  ), items AS (
    INSERT INTO stored_response_items (account_id, item_id, response_id)
    SELECT $2, item.id, stored.id FROM stored CROSS JOIN unnest($12::text[]) AS item(id)
    ON CONFLICT (account_id, item_id) DO NOTHING
  ), webhook AS (
    INSERT INTO response_webhooks (response_id, account_id, url_ciphertext, url_nonce, url_tag,
                                   url_key_version)
    SELECT stored.id, $2, $14::bytea, $15::bytea, $16::bytea, $17::int
      FROM stored WHERE $14::bytea IS NOT NULL
  )
  SELECT count(*)::int AS stored FROM stored`;

const COLUMNS = `r.id, r.token_digest, r.previous_response_id, r.created_at, r.expires_at,
                 r.in_progress`;
const SEALED = `r.ciphertext, r.nonce, r.tag, r.key_version`;
const sealedWhen = (condition: string) =>
  ['ciphertext', 'nonce', 'tag', 'key_version']
    .map((column) => `CASE WHEN ${condition} THEN r.${column} END AS ${column}`)
    .join(', ');

// A response's job has its id as hold id: while the response runs, the hold says whether the
// job has ended.
const FIND = `
  SELECT ${COLUMNS}, ${SEALED}, h.status::text AS hold_status, h.finalized_at AS hold_finalized_at
    FROM stored_responses r LEFT JOIN holds h ON r.in_progress AND h.id = r.id
   WHERE r.id = $2 AND r.account_id = $1 AND ${readable('r')}`;

// A background response's result, once: only while it is in progress, sealed to the same owner;
// its output item ids join the account's (the first response to store an id keeps it).
const FINISH = `
  WITH finished AS (
    UPDATE stored_responses r
       SET ciphertext = $4, nonce = $5, tag = $6, key_version = $7, content_bytes = $8,
           in_progress = false
     WHERE r.id = $2 AND r.account_id = $1 AND r.in_progress
       AND r.token_digest IS NOT DISTINCT FROM $3::text
    RETURNING r.id
  ), items AS (
    INSERT INTO stored_response_items (account_id, item_id, response_id)
    SELECT $1, item.id, finished.id FROM finished CROSS JOIN unnest($9::text[]) AS item(id)
    ON CONFLICT (account_id, item_id) DO NOTHING
  ), webhook AS (
    UPDATE response_webhooks w SET type = $10, ended_at = $11
      FROM finished WHERE w.response_id = finished.id
  )
  SELECT count(*)::int AS finished FROM finished`;

// Background responses whose job's hold ended before $1 (or that have no hold and were stored
// before it) with no result stored: the edge running them is gone.
const LOST = `
  SELECT r.id, r.account_id, r.token_digest, ${SEALED}
    FROM stored_responses r LEFT JOIN holds h ON h.id = r.id
   WHERE r.in_progress AND r.created_at < $1
     AND (h.id IS NULL OR (h.status <> 'pending' AND h.finalized_at < $1))
   ORDER BY r.created_at
   LIMIT $2`;

// The chain, newest first, in one query. The walk stops at the first link the reader may not
// read, one link past $5 (so a longer chain shows), or past $6 bytes; a link that does not exist
// (unknown, purged, deleted, another account's) ends it with its id as the last row's
// `previous_response_id`. Content comes back only when none of that happened.
const CHAIN = `
  WITH RECURSIVE chain AS (
    SELECT ${COLUMNS}, 1 AS depth, r.content_bytes::bigint AS total_bytes,
           ${readable('r')} AS readable
      FROM stored_responses r
     WHERE r.id = $2 AND r.account_id = $1
    UNION ALL
    SELECT ${COLUMNS}, c.depth + 1, c.total_bytes + r.content_bytes, ${readable('r')}
      FROM chain c
      JOIN stored_responses r ON r.id = c.previous_response_id AND r.account_id = $1
     WHERE c.readable AND c.depth <= $5 AND c.total_bytes <= $6
  ), complete AS (
    SELECT bool_and(readable) AND max(depth) <= $5 AND max(total_bytes) <= $6
           AND (SELECT previous_response_id IS NULL FROM chain ORDER BY depth DESC LIMIT 1)
           AS ok
      FROM chain
  )
  SELECT c.id, c.token_digest, c.previous_response_id, c.created_at, c.expires_at,
         c.in_progress, c.depth,
         c.readable, c.total_bytes::text AS total_bytes, ${sealedWhen('k.ok')}
    FROM chain c CROSS JOIN complete k JOIN stored_responses r ON r.id = c.id
   ORDER BY c.depth`;

// The readable responses holding the wanted items, each once with the items it holds; content
// only when all of them fit $5 bytes.
const ITEM_HOLDERS = `
  WITH holders AS (
    SELECT r.id, r.token_digest, array_agg(i.item_id ORDER BY i.item_id) AS item_ids,
           r.content_bytes
      FROM stored_response_items i
      JOIN stored_responses r ON r.id = i.response_id AND r.account_id = $1
     WHERE i.account_id = $1 AND i.item_id = ANY($2::text[]) AND ${readable('r')}
     GROUP BY r.id
  ), total AS (SELECT sum(content_bytes) AS bytes FROM holders)
  SELECT h.id, h.token_digest, h.item_ids, t.bytes::text AS total_bytes,
         ${sealedWhen('t.bytes <= $5')}
    FROM holders h CROSS JOIN total t JOIN stored_responses r ON r.id = h.id
   ORDER BY h.id`;

// Items go with their response (ON DELETE CASCADE).
const DELETE = `
  DELETE FROM stored_responses r
   WHERE r.id = $2 AND r.account_id = $1 AND NOT r.in_progress AND ${readable('r')}`;

// Without FOR UPDATE SKIP LOCKED, which would need UPDATE on the table: replicas purging at
// once wait for each other's short statement and find those rows gone.
const PURGE = `
  DELETE FROM stored_responses WHERE id IN (
    SELECT id FROM stored_responses WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`;

/** Deleted per statement at most, and statements per purge: a backlog never holds locks long. */
const PURGE_BATCH_ROWS = 1000;
const PURGE_MAX_STATEMENTS = 10;

const UNIQUE_VIOLATION = '23505';

const isDuplicateId = (error: unknown): boolean => {
  const failure = error as { code?: unknown; constraint?: unknown };
  return failure.code === UNIQUE_VIOLATION && failure.constraint === 'stored_responses_pkey';
};

/** The sealed columns' parameters, in the order INSERT and FINISH take them. */
const sealedValues = (sealed: SealedValue) => [
  Buffer.from(sealed.ciphertext),
  Buffer.from(sealed.nonce),
  Buffer.from(sealed.tag),
  sealed.keyVersion,
];

export class ResponseRepository {
  constructor(private readonly pool: pg.Pool) {}

  async insert(row: NewStoredResponse): Promise<InsertOutcome> {
    const values = [
      row.id,
      row.accountId,
      row.tokenDigest,
      row.previousResponseId,
      ...sealedValues(row.sealed),
      row.contentBytes,
      row.createdAt,
      row.expiresAt,
      row.itemIds,
      row.inProgress,
      ...(row.webhook ? sealedValues(row.webhook) : [null, null, null, null]),
    ];
    try {
      const { rows } = await this.pool.query<{ stored: number }>(INSERT, values);
      return rows[0]?.stored === 1 ? 'stored' : 'previous_not_readable';
    } catch (error) {
      if (isDuplicateId(error)) return 'duplicate';
      throw error;
    }
  }

  async find(
    accountId: string,
    id: string,
    now: Date,
    reader: Reader,
  ): Promise<FoundResponseRow | null> {
    const { rows } = await this.pool.query<FoundResponseRow>(FIND, [accountId, id, now, reader]);
    return rows[0] ?? null;
  }

  /** False when the response was not in progress any more (nothing changed). */
  async finish(row: FinishedStoredResponse): Promise<boolean> {
    const { rows } = await this.pool.query<{ finished: number }>(FINISH, [
      row.accountId,
      row.id,
      row.tokenDigest,
      ...sealedValues(row.sealed),
      row.contentBytes,
      row.itemIds,
      row.webhookType,
      row.endedAt,
    ]);
    return rows[0]?.finished === 1;
  }

  /** Background responses lost with their edge (their job ended before `before`), oldest first. */
  async lost(before: Date, limit: number): Promise<LostResponseRow[]> {
    return (await this.pool.query<LostResponseRow>(LOST, [before, limit])).rows;
  }

  /** The chain from `id`, newest first: at most `maxLinks` + 1 links, about `maxBytes`. */
  async chain(
    accountId: string,
    id: string,
    now: Date,
    reader: Reader,
    bounds: { maxLinks: number; maxBytes: number },
  ): Promise<ChainRow[]> {
    const values = [accountId, id, now, reader, bounds.maxLinks, bounds.maxBytes];
    return (await this.pool.query<ChainRow>(CHAIN, values)).rows;
  }

  async itemHolders(
    accountId: string,
    itemIds: readonly string[],
    now: Date,
    reader: Reader,
    maxBytes: number,
  ): Promise<ItemHolderRow[]> {
    const values = [accountId, itemIds, now, reader, maxBytes];
    return (await this.pool.query<ItemHolderRow>(ITEM_HOLDERS, values)).rows;
  }

  async delete(accountId: string, id: string, now: Date, reader: Reader): Promise<boolean> {
    const result = await this.pool.query(DELETE, [accountId, id, now, reader]);
    return result.rowCount === 1;
  }

  /** Deletes responses expired at `now` (their items cascade); returns how many went. */
  async purgeExpired(now: Date): Promise<number> {
    let total = 0;
    for (let i = 0; i < PURGE_MAX_STATEMENTS; i += 1) {
      const result = await this.pool.query(PURGE, [now, PURGE_BATCH_ROWS]);
      const purged = result.rowCount ?? 0;
      total += purged;
      if (purged < PURGE_BATCH_ROWS) break;
    }
    return total;
  }
}
