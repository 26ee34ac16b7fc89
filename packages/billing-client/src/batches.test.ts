import { describe, expect, it } from '@jest/globals';
import { GatewayError, toErrorBody, type AdmissionRequest } from '@gateway/contracts';
import type { InternalHttp, InternalRequest, InternalResponse } from '@gateway/runtime';
import { createBatches, type SingleCalls } from './batches.js';

/** An InternalHttp that answers with `answer(request)` and records the requests. */
function fakeHttp(answer: (request: InternalRequest) => InternalResponse) {
  const requests: InternalRequest[] = [];
  const http = Object.assign(
    async (request: InternalRequest) => {
      requests.push(request);
      return answer(request);
    },
    { close: async () => {} },
  ) as InternalHttp;
  return { http, requests };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers,
  body: Buffer.from(JSON.stringify(body)),
});

const admission = (holdId: string): AdmissionRequest => ({
  authorization: 'Bearer sk_x',
  holdId,
  model: 'm',
  estimate: { inputTokens: 1, maxOutputTokens: 1, choices: 1 },
  priority: false,
});

const noSingleCalls: SingleCalls = {
  admit: () => Promise.reject(new Error('single admit called')),
  settle: () => Promise.reject(new Error('single settle called')),
  void: () => Promise.reject(new Error('single void called')),
};

describe('batched calls to billing', () => {
  it("gives each caller its item's answer, or the GatewayError its single call would throw", async () => {
    const refusal = new GatewayError('rate_limit_exceeded', 'Rate limit reached');
    const refusedAnswer = {
      status: 429,
      headers: {
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '1700000000000',
        'retry-after': '7',
      },
      body: toErrorBody(refusal),
    };
    // h2 is refused; every other hold is admitted.
    const { http, requests } = fakeHttp((request) =>
      json(200, {
        answers: (request.body as { items: AdmissionRequest[] }).items.map((item) =>
          item.holdId === 'h2'
            ? refusedAnswer
            : { status: 200, body: { hold: { id: item.holdId } } },
        ),
      }),
    );
    const batches = createBatches(http, { batchMaxInFlight: 1 }, noSingleCalls);
    // The first goes alone; the two made while it is in flight go together.
    const first = batches.admissions.submit(admission('h0'));
    const ok = batches.admissions.submit(admission('h1'));
    const refused = batches.admissions.submit(admission('h2'));
    await expect(first).resolves.toEqual({ hold: { id: 'h0' } });
    await expect(ok).resolves.toEqual({ hold: { id: 'h1' } });
    const error = await refused.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({
      code: 'rate_limit_exceeded',
      details: { retryAfterS: 7, rateLimit: { limit: 10, remaining: 0, allowed: false } },
    });
    expect(requests.map((r) => [r.path, (r.body as { items: unknown[] }).items.length])).toEqual([
      ['/internal/v1/admissions/batch', 1],
      ['/internal/v1/admissions/batch', 2],
    ]);
    expect(requests.every((r) => r.retry === true)).toBe(true);
  });

  it('fails every item of a call billing refused as a whole', async () => {
    const { http } = fakeHttp(() =>
      json(503, toErrorBody(new GatewayError('service_unavailable', 'down'))),
    );
    const batches = createBatches(http, {}, noSingleCalls);
    await expect(
      batches.settlements.submit({ holdId: 'h', usage: { inputTokens: 1, outputTokens: 1 } }),
    ).rejects.toMatchObject({ code: 'service_unavailable' });
  });

  it('sends items one by one to a billing without batch routes (an older release)', async () => {
    const { http, requests } = fakeHttp(() =>
      json(404, toErrorBody(new GatewayError('not_found', 'No route'))),
    );
    const singles: string[] = [];
    const batches = createBatches(
      http,
      {},
      {
        ...noSingleCalls,
        void: async ({ holdId }) => {
          singles.push(holdId);
          return { holdId, status: 'voided', replayed: false };
        },
      },
    );
    await expect(batches.voids.submit({ holdId: 'v1' })).resolves.toMatchObject({ holdId: 'v1' });
    await expect(batches.voids.submit({ holdId: 'v2' })).resolves.toMatchObject({ holdId: 'v2' });
    // The 404 is learnt once: the second void goes straight to the single route.
    expect(requests).toHaveLength(1);
    expect(singles).toEqual(['v1', 'v2']);
  });

  it('admits what the caller takes itself beside what goes to billing, each answer in its place', async () => {
    const { http, requests } = fakeHttp(() =>
      json(503, toErrorBody(new GatewayError('service_unavailable', 'billing down'))),
    );
    const directCalls: string[][] = [];
    const batches = createBatches(
      http,
      {
        batchMaxInFlight: 1,
        directAdmissions: {
          takes: (item) => item.authorization === 'Bearer sk_mine',
          admit: async (items) => {
            directCalls.push(items.map((item) => item.holdId));
            return items.map((item) =>
              item.holdId === 'd2'
                ? { status: 402, body: toErrorBody(new GatewayError('insufficient_balance', 'no')) }
                : { status: 200, body: { hold: { id: item.holdId } } },
            );
          },
        },
      },
      noSingleCalls,
    );
    const mine = (holdId: string) => ({ ...admission(holdId), authorization: 'Bearer sk_mine' });
    const first = batches.admissions.submit(mine('d0'));
    const [d1, b1, d2] = [
      batches.admissions.submit(mine('d1')),
      batches.admissions.submit(admission('b1')),
      batches.admissions.submit(mine('d2')),
    ];
    await expect(first).resolves.toEqual({ hold: { id: 'd0' } });
    await expect(d1).resolves.toEqual({ hold: { id: 'd1' } });
    // Billing failing as a whole fails its own item only.
    await expect(b1).rejects.toMatchObject({ code: 'service_unavailable' });
    await expect(d2).rejects.toMatchObject({ code: 'insufficient_balance' });
    expect(directCalls).toEqual([['d0'], ['d1', 'd2']]);
    expect(requests.map((r) => (r.body as { items: { holdId: string }[] }).items)).toEqual([
      [expect.objectContaining({ holdId: 'b1' })],
    ]);
  });
});
