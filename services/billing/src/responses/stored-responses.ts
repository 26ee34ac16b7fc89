/**
 * Stored Responses API state for edge's `/v1/responses` (contract:
 * packages/contracts/src/responses-state-api.ts): save, read, continue (the chain's history and
 * item references) and delete, under one reader rule, and the retention purge.
 *
 * The reader rule: no reader is an API key of the account and reads every response of the
 * account; a reader digest is a scoped token and reads only what it stored. The repository
 * states it in SQL; whatever it does not return is 404 `response_not_found`, the same answer
 * for unknown, expired, deleted, another account's and another reader's.
 */
import type { Keyring } from '@gateway/crypto';
import {
  BACKGROUND_RESPONSE_LOST_AFTER_MS,
  GatewayError,
  LIMITS,
  RESPONSE_ID_PATTERN,
  RESPONSE_WEBHOOK_TYPES,
  type DeletedResponse,
  type FinishedResponse,
  type FinishResponseRequest,
  type ResponseContext,
  type ResponseContextRequest,
  type ResponseItemRecord,
  type ResponseRecord,
  type ResponseWebhookType,
  type SaveResponseRequest,
} from '@gateway/contracts';
import { assertChainUsable, historyOf, type ChainBounds } from './response-chain.js';
import { invalidResponseBody, itemNotFound, responseNotFound } from './response-errors.js';
import { itemIdsOf, itemIn, validatedOutputItems } from './response-items.js';
import type {
  ChainRow,
  FoundResponseRow,
  ItemHolderRow,
  LostResponseRow,
  Reader,
  ResponseRepository,
  SealedColumns,
} from './response-repository.js';
import {
  encodeContent,
  openContent,
  sealContent,
  type ContentOwner,
  type ResponseContent,
} from './response-sealing.js';
import { sealWebhookUrl } from './response-webhooks.js';

const DAY_MS = 86_400_000;
/** Lost background responses ended per sweep (each is a few statements). */
const LOST_SWEEP_ROWS = 100;
const RESPONSE_ID = new RegExp(RESPONSE_ID_PATTERN);
/** Longest id echoed in a 404 (a malformed one may be anything). */
const ECHOED_ID_MAX_LENGTH = 64;

/**
 * Content bytes one context call opens at most, its chain and its items together. The chain
 * limit alone would allow 255 × 8 MiB in billing's memory; this is far above any context
 * window's worth of conversation.
 */
export const CONTEXT_MAX_BYTES = 8 * LIMITS.storedResponseMaxBytes;

/** The request being answered is its chain's last response, so the stored part holds one fewer. */
const CHAIN_BOUNDS: ChainBounds = {
  maxLinks: LIMITS.responseChainMaxDepth - 1,
  maxBytes: CONTEXT_MAX_BYTES,
};

export interface StoredResponsesDeps {
  store: ResponseRepository;
  keyring: Keyring;
  clock: () => Date;
  /** A response is deleted this long after it was stored (RESPONSE_RETENTION_DAYS). */
  retentionDays: number;
  /**
   * Gives a lost background response's charge back (the ledger's refund of an undelivered
   * answer: idempotent, nothing when its hold was not settled). Absent: nothing is refunded.
   */
  refundHold?: (holdId: string) => Promise<unknown>;
}

/** What one lost-response sweep did: ended ones, and ids it could not end (retried next run). */
export interface LostSweep {
  ended: number;
  failed: string[];
}

const sealedOf = (row: { [K in keyof SealedColumns]: SealedColumns[K] | null }): SealedColumns => {
  const { ciphertext, nonce, tag, key_version } = row;
  // The repository returns content with every link or none; a refusal was thrown before.
  if (ciphertext === null || nonce === null || tag === null || key_version === null) {
    throw new Error('stored response content missing from a usable answer');
  }
  return { ciphertext, nonce, tag, key_version };
};

const notFound = (id: string) => responseNotFound(id.slice(0, ECHOED_ID_MAX_LENGTH));

export class StoredResponses {
  readonly #deps: StoredResponsesDeps;

  constructor(deps: StoredResponsesDeps) {
    this.#deps = deps;
  }

  /**
   * Seals and stores a response with its item ids; 409 when the id is stored already, 404 when
   * its previous response is not one the same reader may read, 400 over the size limit.
   */
  async save(accountId: string, responseId: string, body: SaveResponseRequest): Promise<void> {
    if (!RESPONSE_ID.test(responseId)) {
      throw invalidResponseBody('A response id is resp_ followed by 32 hex digits', 'id');
    }
    if (body.webhookUrl !== undefined && body.inProgress !== true) {
      throw invalidResponseBody('Only a background response has a webhook', 'webhookUrl');
    }
    const content: ResponseContent = { inputItems: body.inputItems, response: body.response };
    const plaintext = plaintextOf(content);
    const owner = { accountId, responseId, tokenDigest: body.tokenDigest };
    const now = this.#deps.clock();
    const outcome = await this.#deps.store.insert({
      id: responseId,
      accountId,
      tokenDigest: body.tokenDigest,
      previousResponseId: body.previousResponseId,
      sealed: sealContent(this.#deps.keyring, owner, plaintext),
      contentBytes: plaintext.length,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.#deps.retentionDays * DAY_MS),
      itemIds: itemIdsOf(content),
      inProgress: body.inProgress ?? false,
      webhook:
        body.webhookUrl === undefined
          ? null
          : sealWebhookUrl(this.#deps.keyring, { accountId, responseId }, body.webhookUrl),
    });
    if (outcome === 'duplicate') {
      throw new GatewayError('conflict', `Response ${responseId} is already stored`);
    }
    if (outcome === 'previous_not_readable') {
      throw responseNotFound(body.previousResponseId ?? responseId, 'previous_response_id');
    }
  }

  async get(accountId: string, responseId: string, reader: Reader): Promise<ResponseRecord> {
    const row = await this.#find(accountId, responseId, this.#deps.clock(), reader);
    if (!row) throw notFound(responseId);
    const content = this.#open(accountId, row, row);
    const lost = row.in_progress && this.#lost(row);
    return {
      id: row.id,
      previousResponseId: row.previous_response_id,
      createdAt: row.created_at.toISOString(),
      expiresAt: row.expires_at.toISOString(),
      inputItems: content.inputItems,
      response: lost ? lostResponse(content.response) : content.response,
      inProgress: row.in_progress && !lost,
    };
  }

  /**
   * A background response's result replaces it, once, sealed to whoever stored it (the reader
   * may be the account's API key finishing a token's response: a cancel).
   */
  async finish(
    accountId: string,
    responseId: string,
    body: FinishResponseRequest,
  ): Promise<FinishedResponse> {
    const now = this.#deps.clock();
    const row = await this.#find(accountId, responseId, now, body.reader);
    if (!row) throw notFound(responseId);
    const webhookType = webhookTypeOf(body.response);
    if (!row.in_progress) return { finished: false };
    const { inputItems } = this.#open(accountId, row, row);
    const owner = { accountId, responseId, tokenDigest: row.token_digest };
    const finished = await this.#storeResult(owner, inputItems, body.response, webhookType, now);
    return { finished };
  }

  /**
   * Ends, as `failed` (`response_lost`), background responses whose job ended over
   * `BACKGROUND_RESPONSE_LOST_AFTER_MS` ago with no result stored: their answer reached nobody,
   * so their hold is refunded, and their webhook says so. At most `limit` a run; one that cannot
   * be ended (say, content that no longer opens) is named and does not stop the others.
   */
  async endLost(limit = LOST_SWEEP_ROWS): Promise<LostSweep> {
    const now = this.#deps.clock();
    const before = new Date(now.getTime() - BACKGROUND_RESPONSE_LOST_AFTER_MS);
    const sweep: LostSweep = { ended: 0, failed: [] };
    for (const row of await this.#deps.store.lost(before, limit)) {
      try {
        if (await this.#endLost(row, now)) sweep.ended += 1;
      } catch {
        sweep.failed.push(row.id);
      }
    }
    return sweep;
  }

  async #endLost(row: LostResponseRow, now: Date): Promise<boolean> {
    const owner = { accountId: row.account_id, responseId: row.id, tokenDigest: row.token_digest };
    const content = openContent(this.#deps.keyring, owner, row);
    // The job's hold has the response's id; refunded first, so a result that fails to store
    // leaves the refund done (it is idempotent) rather than a charge for nothing.
    if (this.#deps.refundHold) await this.#deps.refundHold(row.id).catch(refundRefused);
    const response = lostResponse(content.response);
    return this.#storeResult(owner, content.inputItems, response, 'response.failed', now);
  }

  /** A background response's result, sealed to whoever stored it; false if it had ended. */
  async #storeResult(
    owner: ContentOwner,
    inputItems: ResponseItemRecord[],
    response: Record<string, unknown>,
    webhookType: ResponseWebhookType,
    now: Date,
  ): Promise<boolean> {
    const content: ResponseContent = { inputItems, response };
    const plaintext = plaintextOf(content);
    return this.#deps.store.finish({
      id: owner.responseId,
      accountId: owner.accountId,
      tokenDigest: owner.tokenDigest,
      sealed: sealContent(this.#deps.keyring, owner, plaintext),
      contentBytes: plaintext.length,
      itemIds: itemIdsOf(content),
      webhookType,
      endedAt: now,
    });
  }

  /** The response the reader may read, or null (a malformed id names none). */
  #find(accountId: string, responseId: string, now: Date, reader: Reader) {
    if (!RESPONSE_ID.test(responseId)) return Promise.resolve(null);
    return this.#deps.store.find(accountId, responseId, now, reader);
  }

  /** Its job ended a while ago and nobody saved the result: the edge running it is gone. */
  #lost(row: FoundResponseRow): boolean {
    if (row.hold_status === 'pending') return false;
    const endedAt = row.hold_finalized_at ?? row.created_at;
    return this.#deps.clock().getTime() - endedAt.getTime() > BACKGROUND_RESPONSE_LOST_AFTER_MS;
  }

  /** What a new request continues: its chain's history and the items it references. */
  async context(accountId: string, request: ResponseContextRequest): Promise<ResponseContext> {
    const now = this.#deps.clock();
    const { reader, previousResponseId } = request;
    const chain =
      previousResponseId === null
        ? { contents: [], bytes: 0 }
        : await this.#chain(accountId, previousResponseId, now, reader);
    const items = await this.#items(accountId, request.itemIds, now, reader, chain.bytes);
    return { history: historyOf(chain.contents), items };
  }

  /**
   * Deletes the response (its content and item ids go with the row). A background response still
   * running is 409: its job would run on, charged, with nowhere to store its result; cancel it
   * first.
   */
  async delete(accountId: string, responseId: string, reader: Reader): Promise<DeletedResponse> {
    const now = this.#deps.clock();
    const deleted =
      RESPONSE_ID.test(responseId) &&
      (await this.#deps.store.delete(accountId, responseId, now, reader));
    if (deleted) return { id: responseId, deleted: true };
    const running = await this.#find(accountId, responseId, now, reader);
    if (running?.in_progress) {
      throw new GatewayError(
        'conflict',
        `Response ${responseId} is a background response still in progress; cancel it first`,
      );
    }
    throw notFound(responseId);
  }

  /** Deletes responses past their retention, in bounded batches; returns how many. */
  purgeExpired(): Promise<number> {
    return this.#deps.store.purgeExpired(this.#deps.clock());
  }

  async #chain(accountId: string, id: string, now: Date, reader: Reader) {
    const rows = await this.#deps.store.chain(accountId, id, now, reader, CHAIN_BOUNDS);
    assertChainUsable(id, rows.map(linkOf), CHAIN_BOUNDS);
    return {
      contents: rows.map((row) => this.#open(accountId, row, sealedOf(row))),
      bytes: Number(rows[rows.length - 1]!.total_bytes),
    };
  }

  /** Each wanted item in order; 404 naming the first one missing, 400 past the byte budget. */
  async #items(
    accountId: string,
    itemIds: readonly string[],
    now: Date,
    reader: Reader,
    chainBytes: number,
  ): Promise<ResponseItemRecord[]> {
    if (itemIds.length === 0) return [];
    const budget = CONTEXT_MAX_BYTES - chainBytes;
    const holders = await this.#deps.store.itemHolders(accountId, itemIds, now, reader, budget);
    const held = new Set(holders.flatMap((holder) => holder.item_ids));
    const missing = itemIds.find((itemId) => !held.has(itemId));
    if (missing !== undefined) throw itemNotFound(missing);
    if (Number(holders[0]!.total_bytes) > budget) {
      throw invalidResponseBody(
        `The stored responses of the conversation and its item references exceed ` +
          `${CONTEXT_MAX_BYTES} bytes`,
        'input',
      );
    }
    const found = new Map(holders.flatMap((holder) => this.#heldItems(accountId, holder)));
    return itemIds.map((itemId) => found.get(itemId) ?? throwItemNotFound(itemId));
  }

  #heldItems(accountId: string, holder: ItemHolderRow): [string, ResponseItemRecord][] {
    const content = this.#open(accountId, holder, sealedOf(holder));
    return holder.item_ids.flatMap((itemId) => {
      const item = itemIn(content, itemId);
      return item ? [[itemId, item] as [string, ResponseItemRecord]] : [];
    });
  }

  #open(
    accountId: string,
    row: { id: string; token_digest: string | null },
    sealed: SealedColumns,
  ): ResponseContent {
    const owner = { accountId, responseId: row.id, tokenDigest: row.token_digest };
    return openContent(this.#deps.keyring, owner, sealed);
  }
}

const linkOf = (row: ChainRow) => ({
  id: row.id,
  previousResponseId: row.previous_response_id,
  readable: row.readable,
  totalBytes: Number(row.total_bytes),
  inProgress: row.in_progress,
});

/** What a stored response is sealed as; 400 over the size limit, before anything is sealed. */
function plaintextOf(content: ResponseContent): Buffer {
  // The history answers output items as item records.
  validatedOutputItems(content.response);
  const plaintext = encodeContent(content);
  if (plaintext.length > LIMITS.storedResponseMaxBytes) {
    throw invalidResponseBody(
      `A stored response holds at most ${LIMITS.storedResponseMaxBytes} bytes of JSON ` +
        `(input items and response); this one has ${plaintext.length}`,
      'response',
    );
  }
  return plaintext;
}

/**
 * A refund the ledger refuses changes nothing to ending the response: no hold (the job never got
 * one), or one settled over the refund window ago (billing was away that long). Other failures
 * (the database) fail the row, which the next sweep retries.
 */
function refundRefused(error: unknown): void {
  const code = (error as { code?: unknown }).code;
  if (code !== 'conflict' && code !== 'resource_not_found') throw error;
}

/** A result's webhook event: `response.<status>`; a result must have ended (400 otherwise). */
function webhookTypeOf(response: Record<string, unknown>): ResponseWebhookType {
  const type = `response.${String(response.status)}`;
  if (!(RESPONSE_WEBHOOK_TYPES as readonly string[]).includes(type)) {
    throw invalidResponseBody(
      'A result is completed, incomplete, failed or cancelled',
      'response.status',
    );
  }
  return type as ResponseWebhookType;
}

/** A background response whose result was never saved: failed, as the reference says it. */
const lostResponse = (response: Record<string, unknown>): Record<string, unknown> => ({
  ...response,
  status: 'failed',
  error: {
    code: 'response_lost',
    message:
      'The gateway lost this background response before saving its result; its charge was ' +
      'given back (GET /v1/requests/{id}).',
  },
});

const throwItemNotFound = (itemId: string): never => {
  throw itemNotFound(itemId);
};
