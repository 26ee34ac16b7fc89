import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  BILLING_API_PREFIX,
  BILLING_ROUTES as R,
  routeParamNames,
  type AdmissionRequest,
  type BillingRoute,
  type RouteAnswer,
  type RouteInput,
  type RouteMethod,
} from '@gateway/contracts';
import { INTERNAL_TOKEN_HEADER } from '@gateway/runtime';
import { fundAccount } from '@gateway/testing';
import { putChatModel, startBillingApi, type BillingApiUnderTest } from './billing-api.suite.js';
import {
  RouteAgreement,
  routeRequest,
} from '../../../../packages/testing/src/route-agreement.suite.js';

/*
 * Billing's internal API contract (`BILLING_ROUTES`) agrees with what billing serves: every
 * route is called here with a request its body schema accepts and the credential its `caller`
 * names, answers with the route's status, and its answer passes the route's answer schema; the
 * other service's credential is refused on every route that is not both's. A route added to the
 * table without a call here fails the last test.
 */

let billing: BillingApiUnderTest;
const agreement = new RouteAgreement();
const MODEL = 'acme/billing-routes-1';

beforeAll(async () => {
  billing = await startBillingApi();
  const model = await putChatModel(billing, {
    id: MODEL,
    inputPriceDzdPerM: 100,
    outputPriceDzdPerM: 300,
    maxOutputTokens: 1000,
  });
  expect(model.status).toBe(200);
});

afterAll(async () => {
  await billing?.close();
});

/** The credential of a caller: edge's or the worker's. */
const tokenOf = (as: 'edge' | 'worker') =>
  as === 'worker' ? billing.workerToken : billing.internalToken;

/**
 * Calls one route with the credential its `caller` names (a route of both: edge's unless `as`
 * says otherwise); checks its status and its answer's schema.
 */
async function call<Called extends BillingRoute>(
  route: Called,
  input: RouteInput<Called>,
  as: 'edge' | 'worker' = route.caller === 'worker' ? 'worker' : 'edge',
): Promise<RouteAnswer<Called>> {
  const sent = routeRequest(billing.api, BILLING_API_PREFIX, route, input);
  return agreement.answerOf(route, sent.set(INTERNAL_TOKEN_HEADER, tokenOf(as)));
}

const admission = (apiKey: string, holdId: string): AdmissionRequest => ({
  authorization: `Bearer ${apiKey}`,
  holdId,
  model: MODEL,
  estimate: { inputTokens: 100, maxOutputTokens: 50, choices: 1 },
  priority: false,
});

const usage = { inputTokens: 100, outputTokens: 10 };

describe("billing's internal API contract, against billing", () => {
  it('serves authentication, admissions and holds as the contract says', async () => {
    const { accountId, apiKey } = await fundAccount(billing.operator);
    const authorization = `Bearer ${apiKey}`;
    await call(R.authenticate, { body: { authorization } });
    await call(R.keyInfo, { body: { authorization } });

    const admitted = await call(R.admit, { body: admission(apiKey, 'chatcmpl-routes-1') });
    expect(admitted.replayed).toBe(false);
    const batch = await call(R.admitBatch, {
      body: {
        items: ['chatcmpl-routes-2', 'chatcmpl-routes-3', 'chatcmpl-routes-4'].map((holdId) =>
          admission(apiKey, holdId),
        ),
      },
    });
    expect(batch.answers.map((answer) => answer.status)).toEqual([200, 200, 200]);

    const marked = await call(R.publishMarks, {
      body: { holds: [{ holdId: 'chatcmpl-routes-1', expiresAtMs: Date.now() + 60_000 }] },
    });
    expect(marked.published).toEqual(['chatcmpl-routes-1']);
    const pending = await call(R.holdStatus, { params: { holdId: 'chatcmpl-routes-1' } });
    expect(pending.status).toBe('pending');

    await call(R.settle, { params: { holdId: 'chatcmpl-routes-1' }, body: usage });
    const settlements = await call(R.settleBatch, {
      body: { items: [{ holdId: 'chatcmpl-routes-2', usage }] },
    });
    expect(settlements.answers.map((answer) => answer.status)).toEqual([200]);
    // A route of both: the worker voids as edge does.
    await call(R.void, { params: { holdId: 'chatcmpl-routes-3' }, body: {} }, 'worker');
    const voids = await call(R.voidBatch, {
      body: { items: [{ holdId: 'chatcmpl-routes-4', usage: { outcome: 'refused' } }] },
    });
    expect(voids.answers.map((answer) => answer.status)).toEqual([200]);

    const delivered = await call(R.markDelivered, { params: { holdId: 'chatcmpl-routes-2' } });
    expect(delivered.refunded).toBe(false);
    const refunded = await call(R.refund, { params: { holdId: 'chatcmpl-routes-1' } });
    expect(refunded.status).toBe('refunded');

    await call(R.balance, { params: { accountId } });
    await call(R.receipt, { params: { accountId, requestId: 'chatcmpl-routes-1' } });
    await call(R.usage, { params: { accountId } });
    const log = await call(R.usageRequests, {
      params: { accountId },
      query: new URLSearchParams({ limit: '10' }),
    });
    expect(log.data.length).toBeGreaterThan(0);
    // The same route as CSV (`Accept: text/csv`), which has no answer schema to check.
    const csv = await billing
      .call('get', `/accounts/${accountId}/usage/requests`)
      .set('Accept', 'text/csv');
    expect([csv.status, csv.type]).toEqual([200, 'text/csv']);
  });

  it('serves the catalog to edge and the worker', async () => {
    const { models } = await call(R.listModels, {}, 'worker');
    expect(models.map((model) => model.id)).toContain(MODEL);
    const entry = await call(R.getModel, { params: { modelId: MODEL } });
    expect(entry.id).toBe(MODEL);
  });

  it('serves stored responses, scoped tokens, idempotency keys and node health', async () => {
    const { accountId } = await fundAccount(billing.operator);
    const account = { accountId };
    const first = `resp_${randomBytes(16).toString('hex')}`;
    const background = `resp_${randomBytes(16).toString('hex')}`;
    const saved = (tag: string) => ({
      tokenDigest: null,
      previousResponseId: null,
      inputItems: [{ id: `msg_in_${tag}`, type: 'message', role: 'user', content: tag }],
      response: {
        object: 'response',
        status: 'completed',
        output: [{ id: `msg_out_${tag}`, type: 'message', role: 'assistant', content: tag }],
      },
    });
    await call(R.saveResponse, { params: { ...account, responseId: first }, body: saved('a') });
    await call(R.saveResponse, {
      params: { ...account, responseId: background },
      body: {
        ...saved('b'),
        inProgress: true,
        response: { object: 'response', status: 'queued', background: true, output: [] },
      },
    });
    await call(R.responseRecord, { params: { ...account, responseId: first } });
    const finished = await call(R.finishResponse, {
      params: { ...account, responseId: background },
      body: { reader: null, response: saved('b').response },
    });
    expect(finished.finished).toBe(true);
    const context = await call(R.responseContext, {
      params: account,
      body: { reader: null, previousResponseId: first, itemIds: ['msg_out_b'] },
    });
    expect(context.items).toHaveLength(1);
    await call(R.deleteResponse, { params: { ...account, responseId: first } });

    const created = await call(R.createScopedToken, {
      params: account,
      body: { api_key_name: 'auto', expires_delta: 3600 },
    });
    await call(R.inspectScopedToken, { params: account, body: { token: created.token } });
    const revoked = await call(R.revokeScopedToken, {
      params: account,
      body: { token: created.token },
    });
    expect(revoked.revoked).toBe(true);

    const ref = { accountId, key: 'routes-key-1', requestHash: 'a'.repeat(64) };
    const claimed = await call(R.claimIdempotencyKey, { body: { ...ref, leaseMs: 60_000 } });
    expect(claimed.outcome).toBe('claimed');
    await call(R.completeIdempotencyKey, {
      body: {
        ...ref,
        response: { status: 200, contentType: 'application/json', body: '{}', encoding: 'utf8' },
      },
    });
    const replayed = await call(R.claimIdempotencyKey, { body: { ...ref, leaseMs: 60_000 } });
    expect(replayed.outcome).toBe('replay');
    const other = { ...ref, key: 'routes-key-2' };
    await call(R.claimIdempotencyKey, { body: { ...other, leaseMs: 60_000 } });
    await call(R.releaseIdempotencyKey, { body: other });

    const report = await call(R.reportNodeHealth, {
      body: {
        workerId: 'w-routes',
        nodes: [{ url: 'http://127.0.0.1:9', healthy: true, observedAtMs: Date.now() }],
      },
    });
    expect(report.accepted).toBe(1);
  });

  it("refuses the other service's credential on every route that is not both's", async () => {
    const refusals: string[] = [];
    for (const route of Object.values(R) as readonly BillingRoute[]) {
      if (route.caller === 'both') continue;
      const other = route.caller === 'edge' ? 'worker' : 'edge';
      const params = Object.fromEntries(routeParamNames(route).map((name) => [name, 'x']));
      const verb = route.method.toLowerCase() as Lowercase<RouteMethod>;
      const path = route.path.replace(/[:*][A-Za-z]+/g, (match) => params[match.slice(1)]!);
      const answer = await billing.api[verb](`${BILLING_API_PREFIX}${path}`)
        .set(INTERNAL_TOKEN_HEADER, tokenOf(other))
        .send({});
      if (answer.status !== 403 || answer.body.error?.code !== 'forbidden') {
        refusals.push(`${route.method} ${route.path} as ${other}: ${answer.status}`);
      }
    }
    expect(refusals).toEqual([]);
  });

  it('has called every route of the table', () => {
    expect(agreement.missed(Object.values(R))).toEqual([]);
  });
});
