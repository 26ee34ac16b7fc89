import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createBillingClient, type BillingClient } from '@gateway/billing-client';
import { LIMITS, type SaveResponseRequest } from '@gateway/contracts';
import { createLogger, createServiceMetrics } from '@gateway/observability';
import {
  createServiceApp,
  finishApp,
  INTERNAL_TOKEN_HEADER,
  listen,
  type RunningServer,
} from '@gateway/runtime';
import { createTestDatabase } from '@gateway/testing';
import { billingDatabaseTemplate, createPrismaClient, type PrismaClient } from '../db/client.js';
import { mountBillingApi } from '../http/billing-app.js';
import { createTestBillingServices } from '../http/billing-services.suite.js';
import { gatewayErrorOf } from '../identity/fixtures.suite.js';

/*
 * Stored Responses state over billing's internal API, through the billing client edge uses:
 * both ends of the contract, the routes' own body limits, the request checks, and the caller
 * restriction (edge only).
 */

const TOKEN_A = 'a'.repeat(64);
const TOKEN_B = 'b'.repeat(64);
const tokens = { edge: randomBytes(32).toString('hex'), worker: randomBytes(32).toString('hex') };

let db: { runtimeUrl: string; drop(): Promise<void> };
let prisma: PrismaClient;
let server: RunningServer;
let url: string;
let billing: BillingClient;
let accountId: string;

beforeAll(async () => {
  db = await createTestDatabase(billingDatabaseTemplate);
  prisma = createPrismaClient(db.runtimeUrl, { maxConnections: 4 });
  const services = createTestBillingServices(prisma);
  const logger = createLogger({
    service: 'billing',
    destination: new Writable({ write: (_c, _e, cb) => cb() }),
  });
  const app = createServiceApp({
    logger,
    metrics: createServiceMetrics('billing', { defaultMetrics: false }),
    readiness: [],
    isShuttingDown: () => false,
  });
  mountBillingApi(app, services, tokens);
  finishApp(app, logger);
  server = await listen(app, '127.0.0.1', 0);
  url = `http://127.0.0.1:${server.port}`;
  billing = createBillingClient({ baseUrl: url, token: tokens.edge, timeoutMs: 30_000 });
  accountId = (await services.identity.accounts.create({ name: 'Responses API' })).id;
});

afterAll(async () => {
  await billing?.close();
  await server?.close(0);
  await prisma?.$disconnect();
  await db?.drop();
});

const newId = () => `resp_${randomBytes(16).toString('hex')}`;

function body(tag: string, more: Partial<SaveResponseRequest> = {}): SaveResponseRequest {
  return {
    tokenDigest: TOKEN_A,
    previousResponseId: null,
    inputItems: [{ id: `msg_in_${tag}`, type: 'message', role: 'user', content: `ask ${tag}` }],
    response: {
      id: 'resp_x',
      object: 'response',
      output: [{ id: `msg_out_${tag}`, type: 'message', role: 'assistant', content: tag }],
    },
    ...more,
  };
}

/** A call with a raw body or credential, as the client would never send it. */
const raw = (method: string, path: string, options: { body?: string; token?: string } = {}) =>
  fetch(`${url}/internal/v1/accounts/${accountId}/responses${path}`, {
    method,
    headers: {
      [INTERNAL_TOKEN_HEADER]: options.token ?? tokens.edge,
      'Content-Type': 'application/json',
    },
    ...(options.body === undefined ? {} : { body: options.body }),
  });

describe('stored responses through the billing client', () => {
  it('are saved, read, continued and deleted under the reader rule', async () => {
    const first = newId();
    const second = newId();
    await billing.saveResponse(accountId, first, body('one'));
    await billing.saveResponse(accountId, second, body('two', { previousResponseId: first }));

    const record = await billing.responseRecord(accountId, first, TOKEN_A);
    const { inputItems, response } = body('one');
    expect(record).toEqual({
      id: first,
      previousResponseId: null,
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
      inputItems,
      response,
      inProgress: false,
    });
    expect(await billing.responseRecord(accountId, first, null)).toEqual(record);
    const refused = await gatewayErrorOf(billing.responseRecord(accountId, first, TOKEN_B));
    expect(refused).toMatchObject({ code: 'response_not_found', status: 404 });

    const context = await billing.responseContext(accountId, {
      reader: TOKEN_A,
      previousResponseId: second,
      itemIds: ['msg_out_one'],
    });
    expect(context.history.map(({ id }) => id)).toEqual([
      'msg_in_one',
      'msg_out_one',
      'msg_in_two',
      'msg_out_two',
    ]);
    expect(context.items).toEqual(body('one').response.output);

    expect((await gatewayErrorOf(billing.saveResponse(accountId, first, body('one')))).code).toBe(
      'conflict',
    );
    expect((await gatewayErrorOf(billing.deleteResponse(accountId, first, TOKEN_B))).code).toBe(
      'response_not_found',
    );
    expect(await billing.deleteResponse(accountId, first, TOKEN_A)).toEqual({
      id: first,
      deleted: true,
    });
    const gone = await gatewayErrorOf(
      billing.responseContext(accountId, { reader: null, previousResponseId: second, itemIds: [] }),
    );
    expect(gone).toMatchObject({ code: 'response_not_found', param: 'previous_response_id' });
  });

  it("take bodies far above the internal API's JSON limit, and refuse content over theirs with 400", async () => {
    const large = body('large', { response: { output: [], text: 'x'.repeat(1024 * 1024) } });
    await billing.saveResponse(accountId, newId(), large);
    const text = 'x'.repeat(LIMITS.storedResponseMaxBytes);
    const over = body('over', { response: { output: [], text } });
    expect(await gatewayErrorOf(billing.saveResponse(accountId, newId(), over))).toMatchObject({
      code: 'invalid_request_body',
      param: 'response',
    });
  });

  it('check bodies, readers and item ids', async () => {
    const noDigest = JSON.stringify({ ...body('bad'), tokenDigest: undefined });
    const missing = await raw('PUT', `/${newId()}`, { body: noDigest });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: unknown }).error).toMatchObject({
      code: 'invalid_request_body',
    });
    const badReader = await gatewayErrorOf(billing.responseRecord(accountId, newId(), 'A1'));
    expect(badReader).toMatchObject({ code: 'invalid_request_body', param: 'reader' });
    const twice = await raw('GET', `/${newId()}?reader=${TOKEN_A}&reader=${TOKEN_B}`);
    expect(twice.status).toBe(400);
    const repeated = { reader: null, previousResponseId: null, itemIds: ['msg_a', 'msg_a'] };
    expect((await gatewayErrorOf(billing.responseContext(accountId, repeated))).code).toBe(
      'invalid_request_body',
    );
  });

  it('answer edge only', async () => {
    const id = newId();
    await billing.saveResponse(accountId, id, body('edge-only'));
    const context = JSON.stringify({ reader: null, previousResponseId: id, itemIds: [] });
    for (const [method, path, sent] of [
      ['PUT', `/${newId()}`, JSON.stringify(body('worker'))],
      ['GET', `/${id}`, undefined],
      ['DELETE', `/${id}`, undefined],
      ['POST', '/context', context],
    ] as const) {
      const answer = await raw(method, path, {
        token: tokens.worker,
        ...(sent === undefined ? {} : { body: sent }),
      });
      const { code } = ((await answer.json()) as { error: { code: string } }).error;
      expect({ method, status: answer.status, code }).toEqual({
        method,
        status: 403,
        code: 'forbidden',
      });
    }
    expect((await billing.responseRecord(accountId, id, null)).id).toBe(id);
  });
});
