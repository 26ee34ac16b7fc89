import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import {
  BACKGROUND_RESPONSE_LOST_AFTER_MS,
  LIMITS,
  parseEnvelope,
  type SaveResponseRequest,
} from '@gateway/contracts';
import type { MessageBus } from '@gateway/messaging';
import { pgPoolOf } from '../db/client.js';
import { gatewayErrorOf, setUpIdentity, type IdentityHarness } from '../identity/fixtures.suite.js';
import { ResponseRepository } from './response-repository.js';
import { ResponseWebhookRepository } from './response-webhook-repository.js';
import { ResponseWebhookOutbox } from './response-webhooks.js';
import { StoredResponses } from './stored-responses.js';

/*
 * Stored Responses state against the real database, as billing's runtime role: sealed rows,
 * the chain in one query, item references, the reader rule, expiry and the purge, deletion and
 * the refusals. The clock is the test's.
 */

const DAY_MS = 86_400_000;
const TOKEN_A = 'a'.repeat(64);
const TOKEN_B = 'b'.repeat(64);

let h: IdentityHarness;
let responses: StoredResponses;
let repository: ResponseRepository;
/** Statements the repository sent, counted. */
let queries = 0;
let accountId: string;
let otherAccountId: string;

beforeAll(async () => {
  h = await setUpIdentity();
  const pool = pgPoolOf(h.prisma);
  const counted = {
    query: (...args: unknown[]) => {
      queries += 1;
      return (pool.query as (...a: unknown[]) => unknown).apply(pool, args);
    },
  } as unknown as pg.Pool;
  repository = new ResponseRepository(counted);
  responses = new StoredResponses({
    store: repository,
    keyring: h.keyring,
    clock: h.clock.now,
    retentionDays: 30,
  });
  accountId = (await h.identity.accounts.create({ name: 'Responses' })).id;
  otherAccountId = (await h.identity.accounts.create({ name: 'Someone else' })).id;
});

afterAll(async () => {
  await h?.close();
});

const newId = () => `resp_${randomBytes(16).toString('hex')}`;
const message = (id: string, text: string) => ({
  id,
  type: 'message',
  role: 'user',
  content: [{ type: 'input_text', text }],
});

/** A response whose input and output items are named after `tag`. */
function body(tag: string, more: Partial<SaveResponseRequest> = {}): SaveResponseRequest {
  return {
    tokenDigest: null,
    previousResponseId: null,
    inputItems: [message(`msg_in_${tag}`, `secret question ${tag}`)],
    response: {
      object: 'response',
      status: 'completed',
      output: [{ ...message(`msg_out_${tag}`, `secret answer ${tag}`), role: 'assistant' }],
    },
    ...more,
  };
}

/** The output item of `body(tag)`. */
const outputOf = (tag: string) => (body(tag).response.output as unknown[])[0];

/** Saves a response named `tag`, returns its id. */
async function saved(tag: string, more: Partial<SaveResponseRequest> = {}, account = accountId) {
  const id = newId();
  await responses.save(account, id, body(tag, more));
  return id;
}

const rows = async (text: string, values: unknown[]) => (await h.sql.query(text, values)).rows;
const ids = (items: { id: string }[]) => items.map((item) => item.id);

describe('saving and reading', () => {
  it('round-trips the content, sealed: the row holds no plaintext', async () => {
    const id = await saved('one');
    const record = await responses.get(accountId, id, null);
    expect(record).toEqual({
      id,
      previousResponseId: null,
      createdAt: h.clock.now().toISOString(),
      expiresAt: new Date(h.clock.ms + 30 * DAY_MS).toISOString(),
      inputItems: body('one').inputItems,
      response: body('one').response,
      inProgress: false,
    });
    const [row] = await rows(
      'SELECT r::text AS raw, ciphertext, key_version FROM stored_responses r WHERE id = $1',
      [id],
    );
    const plaintext = ['secret', 'msg_in_one'];
    for (const text of plaintext) {
      expect(row.ciphertext.includes(text)).toBe(false);
      expect(row.raw).not.toContain(text);
      expect(row.raw).not.toContain(Buffer.from(text).toString('hex'));
    }
    expect(row.key_version).toBe(1);
    const items = await rows(
      'SELECT item_id, response_id FROM stored_response_items WHERE account_id = $1 AND response_id = $2 ORDER BY item_id',
      [accountId, id],
    );
    expect(items).toEqual([
      { item_id: 'msg_in_one', response_id: id },
      { item_id: 'msg_out_one', response_id: id },
    ]);
  });

  it('refuses a second save of the same id (409), an oversized one and bad output (400)', async () => {
    const id = await saved('twice');
    expect((await gatewayErrorOf(responses.save(accountId, id, body('twice')))).code).toBe(
      'conflict',
    );
    const huge = body('huge', {
      response: { output: [], text: 'x'.repeat(LIMITS.storedResponseMaxBytes) },
    });
    expect(await gatewayErrorOf(responses.save(accountId, newId(), huge))).toMatchObject({
      code: 'invalid_request_body',
      param: 'response',
    });
    const noId = body('no-id', { response: { output: [{ type: 'message' }] } });
    expect(await gatewayErrorOf(responses.save(accountId, newId(), noId))).toMatchObject({
      code: 'invalid_request_body',
      param: 'response.output[0].id',
    });
    expect(await gatewayErrorOf(responses.save(accountId, 'resp_short', body('x')))).toMatchObject({
      code: 'invalid_request_body',
      param: 'id',
    });
  });

  it("is 404 for an unknown, malformed or another account's id, the same answer", async () => {
    const mine = await saved('mine');
    for (const [account, id] of [
      [otherAccountId, mine],
      [accountId, newId()],
      [accountId, 'resp_../../x'],
    ] as const) {
      for (const attempt of [
        responses.get(account, id, null),
        responses.delete(account, id, null),
        responses.context(account, { reader: null, previousResponseId: id, itemIds: [] }),
      ]) {
        expect(await gatewayErrorOf(attempt)).toMatchObject({ code: 'response_not_found' });
      }
    }
    const continued = body('theirs', { previousResponseId: mine });
    expect(await gatewayErrorOf(responses.save(otherAccountId, newId(), continued))).toMatchObject({
      code: 'response_not_found',
      param: 'previous_response_id',
    });
    const items = { reader: null, previousResponseId: null, itemIds: ['msg_in_mine'] };
    expect(await gatewayErrorOf(responses.context(otherAccountId, items))).toMatchObject({
      code: 'response_not_found',
      param: 'input',
      message: 'No stored item msg_in_mine',
    });
  });
});

describe('the context of a new request', () => {
  it('rebuilds a chain of three oldest first, in one query', async () => {
    const first = await saved('c1');
    const second = await saved('c2', { previousResponseId: first });
    const third = await saved('c3', { previousResponseId: second });
    queries = 0;
    const context = await responses.context(accountId, {
      reader: null,
      previousResponseId: third,
      itemIds: [],
    });
    expect(queries).toBe(1);
    expect(ids(context.history)).toEqual([
      'msg_in_c1',
      'msg_out_c1',
      'msg_in_c2',
      'msg_out_c2',
      'msg_in_c3',
      'msg_out_c3',
    ]);
    expect(context.history[1]).toEqual(outputOf('c1'));
    expect(context.items).toEqual([]);
  });

  it('answers item references in the order asked; a missing one is 404 naming it', async () => {
    await saved('i1');
    await saved('i2');
    queries = 0;
    const context = await responses.context(accountId, {
      reader: null,
      previousResponseId: null,
      itemIds: ['msg_out_i2', 'msg_in_i1'],
    });
    expect(queries).toBe(1);
    expect(context).toEqual({
      history: [],
      items: [outputOf('i2'), body('i1').inputItems[0]],
    });
    const missing = { reader: null, previousResponseId: null, itemIds: ['msg_in_i1', 'msg_nope'] };
    expect(await gatewayErrorOf(responses.context(accountId, missing))).toMatchObject({
      code: 'response_not_found',
      param: 'input',
      message: 'No stored item msg_nope',
    });
  });

  it('keeps the first response of an item id sent again', async () => {
    const first = await saved('dup');
    // A client sends the earlier output back with its id (as the SDKs do), changed.
    const again = body('dup2', { inputItems: [message('msg_out_dup', 'changed')] });
    await responses.save(accountId, newId(), again);
    const asked = { reader: null, previousResponseId: null, itemIds: ['msg_out_dup'] };
    const { items } = await responses.context(accountId, asked);
    expect(items).toEqual([outputOf('dup')]);
    // Its first response gone, the id is gone too (documented: first wins).
    await responses.delete(accountId, first, null);
    expect((await gatewayErrorOf(responses.context(accountId, asked))).code).toBe(
      'response_not_found',
    );
  });

  it('is 404 naming a link that was deleted or expired mid-chain', async () => {
    const first = await saved('m1');
    h.clock.advance(DAY_MS);
    const second = await saved('m2', { previousResponseId: first });
    const third = await saved('m3', { previousResponseId: second });
    h.clock.advance(29 * DAY_MS);
    const asked = { reader: null, previousResponseId: third, itemIds: [] };
    expect(await gatewayErrorOf(responses.context(accountId, asked))).toMatchObject({
      code: 'response_not_found',
      param: 'previous_response_id',
      message: `No stored response ${first}`,
    });
    await responses.delete(accountId, second, null);
    expect((await gatewayErrorOf(responses.context(accountId, asked))).message).toBe(
      `No stored response ${second}`,
    );
  });

  it(`is 400 for a chain over ${LIMITS.responseChainMaxDepth} responses with the request's own`, async () => {
    let previousResponseId: string | null = null;
    for (let i = 0; i < LIMITS.responseChainMaxDepth - 1; i += 1) {
      previousResponseId = await saved(`d${i}`, { inputItems: [], previousResponseId });
    }
    const full = { reader: null, previousResponseId, itemIds: [] };
    const { history } = await responses.context(accountId, full);
    expect(history).toHaveLength(LIMITS.responseChainMaxDepth - 1);
    const tooLong = await saved('deepest', { inputItems: [], previousResponseId });
    queries = 0;
    const refusal = await gatewayErrorOf(
      responses.context(accountId, { ...full, previousResponseId: tooLong }),
    );
    expect(refusal).toMatchObject({ code: 'invalid_request_body', param: 'previous_response_id' });
    expect(queries).toBe(1);
  });
});

describe('the reader rule', () => {
  it('lets a token read its own only, and an API key everything of the account', async () => {
    const byA = await saved('ta', { tokenDigest: TOKEN_A });
    const byB = await saved('tb', { tokenDigest: TOKEN_B });
    const byKey = await saved('key');
    expect((await responses.get(accountId, byA, TOKEN_A)).id).toBe(byA);
    for (const id of [byB, byKey]) {
      expect((await gatewayErrorOf(responses.get(accountId, id, TOKEN_A))).code).toBe(
        'response_not_found',
      );
      expect((await gatewayErrorOf(responses.delete(accountId, id, TOKEN_A))).code).toBe(
        'response_not_found',
      );
    }
    for (const id of [byA, byB, byKey]) {
      expect((await responses.get(accountId, id, null)).id).toBe(id);
    }
    const fromB = { reader: TOKEN_B, previousResponseId: byA, itemIds: [] };
    expect(await gatewayErrorOf(responses.context(accountId, fromB))).toMatchObject({
      code: 'response_not_found',
      message: `No stored response ${byA}`,
    });
    const itemOfB = { reader: TOKEN_A, previousResponseId: null, itemIds: ['msg_in_tb'] };
    expect((await gatewayErrorOf(responses.context(accountId, itemOfB))).code).toBe(
      'response_not_found',
    );
    // A token continues only its own; a key may continue a token's.
    const overKey = body('ta2', { tokenDigest: TOKEN_A, previousResponseId: byKey });
    expect((await gatewayErrorOf(responses.save(accountId, newId(), overKey))).code).toBe(
      'response_not_found',
    );
    const keyOverA = await saved('key2', { previousResponseId: byA });
    const asKey = await responses.context(accountId, {
      reader: null,
      previousResponseId: keyOverA,
      itemIds: ['msg_in_tb'],
    });
    expect(ids(asKey.history)).toEqual(['msg_in_ta', 'msg_out_ta', 'msg_in_key2', 'msg_out_key2']);
    expect(ids(asKey.items)).toEqual(['msg_in_tb']);
  });
});

describe('deleting and expiring', () => {
  it('deletes the row and its items; the content is gone, a second delete is 404', async () => {
    const id = await saved('del', { tokenDigest: TOKEN_A });
    expect(await responses.delete(accountId, id, TOKEN_A)).toEqual({ id, deleted: true });
    const left = await rows(
      `SELECT (SELECT count(*) FROM stored_responses WHERE id = $1)::int AS responses,
              (SELECT count(*) FROM stored_response_items WHERE response_id = $1)::int AS items`,
      [id],
    );
    expect(left).toEqual([{ responses: 0, items: 0 }]);
    expect((await gatewayErrorOf(responses.delete(accountId, id, TOKEN_A))).code).toBe(
      'response_not_found',
    );
  });

  it('is 404 once expired, and purged in batches of 1000 with its items', async () => {
    const id = await saved('old');
    h.clock.advance(30 * DAY_MS);
    const kept = await saved('new');
    expect((await gatewayErrorOf(responses.get(accountId, id, null))).code).toBe(
      'response_not_found',
    );
    // A backlog: 2,100 expired rows (their content never opens, so any bytes will do).
    await h.sql.query(
      `INSERT INTO stored_responses (id, account_id, ciphertext, nonce, tag, key_version,
                                     content_bytes, created_at, expires_at)
       SELECT 'resp_' || md5(n::text), $1, '\\x00', '\\x00', '\\x00', 1, 1,
              $2::timestamptz - interval '31 days', $2::timestamptz - interval '1 day'
         FROM generate_series(1, 2100) AS n`,
      [accountId, h.clock.now()],
    );
    const [{ expired }] = await rows(
      'SELECT count(*)::int AS expired FROM stored_responses WHERE expires_at <= $1',
      [h.clock.now()],
    );
    expect(expired).toBeGreaterThanOrEqual(2101);
    queries = 0;
    expect(await responses.purgeExpired()).toBe(expired);
    // 1000 rows per statement: the last one deletes fewer and ends the purge.
    expect(queries).toBe(Math.floor(expired / 1000) + 1);
    const left = await rows(
      `SELECT (SELECT count(*) FROM stored_responses WHERE expires_at <= $1)::int AS expired,
              (SELECT count(*) FROM stored_response_items WHERE response_id = $2)::int AS items`,
      [h.clock.now(), id],
    );
    expect(left).toEqual([{ expired: 0, items: 0 }]);
    expect((await responses.get(accountId, kept, null)).id).toBe(kept);
  });
});

describe('the repository', () => {
  it('returns no content for a chain over its byte bound', async () => {
    const first = await saved('b1');
    const second = await saved('b2', { previousResponseId: first });
    const chain = await repository.chain(accountId, second, h.clock.now(), null, {
      maxLinks: 10,
      maxBytes: 10,
    });
    expect(chain.map(({ id, ciphertext }) => ({ id, ciphertext }))).toEqual([
      { id: second, ciphertext: null },
    ]);
    expect(Number(chain[0]!.total_bytes)).toBeGreaterThan(10);
  });
});

describe('background responses', () => {
  const queued = (tag: string) =>
    body(tag, {
      inProgress: true,
      response: { object: 'response', status: 'queued', background: true, output: [] },
    });

  it('is in progress until its result replaces it, once; meanwhile it cannot be continued', async () => {
    const id = newId();
    await responses.save(accountId, id, queued('bg'));
    const running = await responses.get(accountId, id, null);
    expect([running.inProgress, running.response.status]).toEqual([true, 'queued']);
    const continued = await gatewayErrorOf(
      responses.context(accountId, { reader: null, previousResponseId: id, itemIds: [] }),
    );
    expect([continued.code, continued.param, continued.message]).toEqual([
      'invalid_request_body',
      'previous_response_id',
      expect.stringContaining(`${id} is a background response still in progress`),
    ]);
    const result = body('bg').response;
    expect(await responses.finish(accountId, id, { reader: null, response: result })).toEqual({
      finished: true,
    });
    const done = await responses.get(accountId, id, null);
    expect([done.inProgress, done.response, done.inputItems]).toEqual([
      false,
      result,
      body('bg').inputItems,
    ]);
    // Its output items are the account's now, and the chain continues.
    const context = await responses.context(accountId, {
      reader: null,
      previousResponseId: id,
      itemIds: ['msg_out_bg'],
    });
    expect(context.items).toEqual([outputOf('bg')]);
    // A second result (a cancel after it finished, a retry) changes nothing.
    const cancelled = { ...result, status: 'cancelled', output: [] };
    expect(await responses.finish(accountId, id, { reader: null, response: cancelled })).toEqual({
      finished: false,
    });
    expect((await responses.get(accountId, id, null)).response).toEqual(result);
  });

  it('is not deleted while it runs (409: cancel it first); once ended it is', async () => {
    const id = newId();
    await responses.save(accountId, id, queued('running'));
    const refused = await gatewayErrorOf(responses.delete(accountId, id, null));
    expect(refused.code).toBe('conflict');
    await responses.finish(accountId, id, { reader: null, response: body('running').response });
    expect(await responses.delete(accountId, id, null)).toEqual({ id, deleted: true });
  });

  it("an API key finishes a token's response, which stays sealed to the token", async () => {
    const id = newId();
    await responses.save(accountId, id, { ...queued('tok'), tokenDigest: TOKEN_A });
    const other = await gatewayErrorOf(
      responses.finish(accountId, id, { reader: TOKEN_B, response: body('x').response }),
    );
    expect(other.code).toBe('response_not_found');
    const cancelled = { object: 'response', status: 'cancelled', background: true, output: [] };
    expect(await responses.finish(accountId, id, { reader: null, response: cancelled })).toEqual({
      finished: true,
    });
    expect((await responses.get(accountId, id, TOKEN_A)).response).toEqual(cancelled);
  });

  it('reads as failed (response_lost) once its job ended long ago with no result saved', async () => {
    const id = newId();
    await responses.save(accountId, id, queued('lost'));
    // No hold of that id: the job never got one, or it ended; either way nothing saves it.
    h.clock.advance(60_000);
    expect((await responses.get(accountId, id, null)).inProgress).toBe(true);
    h.clock.advance(BACKGROUND_RESPONSE_LOST_AFTER_MS);
    const lost = await responses.get(accountId, id, null);
    expect([lost.inProgress, lost.response.status, lost.response.error]).toEqual([
      false,
      'failed',
      expect.objectContaining({ code: 'response_lost' }),
    ]);
  });
});

describe("a background response's webhook", () => {
  const URL_OF_HOOK = 'https://hooks.example.com/responses?token=secret';
  const route = { exchange: 'gateway.events', routingKey: 'response.ended' };
  const published: unknown[] = [];
  let outbox: ResponseWebhookOutbox;

  beforeAll(() => {
    const bus = {
      publish: async (_to: unknown, body: unknown) => void published.push(body),
    } as unknown as MessageBus;
    outbox = new ResponseWebhookOutbox(
      new ResponseWebhookRepository(pgPoolOf(h.prisma)),
      h.keyring,
      bus,
      route,
    );
  });

  const queuedWithHook = (tag: string) =>
    body(tag, {
      inProgress: true,
      webhookUrl: URL_OF_HOOK,
      response: { object: 'response', status: 'queued', background: true, output: [] },
    });
  const events = () => published.map((message) => parseEnvelope('response.ended', message).payload);

  it('is announced once when the response ends, the URL sealed until then', async () => {
    const id = newId();
    await responses.save(accountId, id, queuedWithHook('hook'));
    const [row] = await rows(
      'SELECT r::text AS raw FROM response_webhooks r WHERE response_id = $1',
      [id],
    );
    expect(row.raw).not.toContain('hooks.example.com');
    // Not ended: nothing to announce.
    await outbox.publishPending(100);
    expect(events().filter((event) => event.eventId === id)).toEqual([]);
    const result = { ...body('hook').response, status: 'incomplete' };
    await responses.finish(accountId, id, { reader: null, response: result });
    expect((await outbox.publishPending(100)).published).toBeGreaterThanOrEqual(1);
    expect(events().filter((event) => event.eventId === id)).toEqual([
      {
        eventId: id,
        accountId,
        occurredAtMs: h.clock.ms,
        webhookUrl: URL_OF_HOOK,
        type: 'response.incomplete',
        data: { id },
      },
    ]);
    // Published once: the next run has nothing of it.
    await outbox.publishPending(100);
    expect(events().filter((event) => event.eventId === id)).toHaveLength(1);
  });

  it('announces a response lost with its edge as failed, ended by the sweep', async () => {
    const id = newId();
    await responses.save(accountId, id, queuedWithHook('swept'));
    await responses.endLost();
    expect((await responses.get(accountId, id, null)).inProgress).toBe(true);
    h.clock.advance(BACKGROUND_RESPONSE_LOST_AFTER_MS + 1_000);
    const refunded: string[] = [];
    const sweeping = new StoredResponses({
      store: repository,
      keyring: h.keyring,
      clock: h.clock.now,
      retentionDays: 30,
      refundHold: async (holdId) => void refunded.push(holdId),
    });
    const sweep = await sweeping.endLost();
    expect(sweep.failed).toEqual([]);
    expect(sweep.ended).toBeGreaterThanOrEqual(1);
    // Its answer reached nobody: the job's hold (the response's id) is refunded.
    expect(refunded).toContain(id);
    const record = await responses.get(accountId, id, null);
    expect([record.inProgress, record.response.status]).toEqual([false, 'failed']);
    await outbox.publishPending(100);
    expect(events().find((event) => event.eventId === id)?.type).toBe('response.failed');
  });

  it('is refused on a response that is not in the background, and a result must have ended', async () => {
    const refused = await gatewayErrorOf(
      responses.save(accountId, newId(), { ...body('x'), webhookUrl: URL_OF_HOOK }),
    );
    expect([refused.code, refused.param]).toEqual(['invalid_request_body', 'webhookUrl']);
    const id = newId();
    await responses.save(accountId, id, queuedWithHook('bad'));
    const notEnded = await gatewayErrorOf(
      responses.finish(accountId, id, { reader: null, response: { status: 'queued', output: [] } }),
    );
    expect([notEnded.code, notEnded.param]).toEqual(['invalid_request_body', 'response.status']);
  });
});
