import { describe, expect, it } from '@jest/globals';
import { OPERATOR_ROUTES } from '@gateway/contracts';
import type { InternalHttp, InternalRequest, InternalResponse } from '@gateway/runtime';
import { routeSender } from './route-sender.js';

/** What each table's calls send and how their refusals come back (no server: a recorded http). */

/** A read (GET, path parameter) and a write (POST with a body) of a real table. */
const ROUTES = { read: OPERATOR_ROUTES.getAccount, write: OPERATOR_ROUTES.credit };
const CREDIT = { amount_dzd: 1 };

function recorded(answer: Partial<InternalResponse> = {}) {
  const sent: InternalRequest[] = [];
  const send = async (request: InternalRequest): Promise<InternalResponse> => {
    sent.push(request);
    return { status: 200, headers: {}, body: Buffer.from('{"id":"a/1"}'), ...answer };
  };
  const http: InternalHttp = Object.assign(send, { close: async () => {} });
  return { sent, http };
}

const refusal = (status: number, code: string) =>
  Buffer.from(JSON.stringify({ error: { message: 'no', type: 'service_error', code } }));

describe('routeSender', () => {
  it("fills the path under the table's prefix and answers the route's JSON", async () => {
    const { sent, http } = recorded();
    const { call } = routeSender(http, { prefix: '/internal/v1' });
    const query = new URLSearchParams({ q: 'x' });
    await expect(call(ROUTES.read, { params: { id: 'a 1' }, query })).resolves.toEqual({
      id: 'a/1',
    });
    expect(sent).toEqual([{ method: 'GET', path: '/internal/v1/accounts/a%201?q=x' }]);
  });

  it("retries by the table's rule unless the call says otherwise, and sends headers", async () => {
    const { sent, http } = recorded();
    const { done } = routeSender(http, {
      prefix: '',
      retries: (route) => route.method === 'GET',
    });
    await done(ROUTES.read, { params: { id: 'a' } });
    await done(ROUTES.write, {
      params: { id: 'a' },
      body: CREDIT,
      headers: { 'Idempotency-Key': 'k' },
    });
    await done(
      ROUTES.write,
      { params: { id: 'a' }, body: CREDIT },
      { retry: true, accept: 'text/csv' },
    );
    expect(sent.map(({ retry, headers }) => ({ retry, headers }))).toEqual([
      { retry: true, headers: undefined },
      { retry: false, headers: { 'Idempotency-Key': 'k' } },
      { retry: true, headers: { Accept: 'text/csv' } },
    ]);
  });

  it("throws billing's refusal as billing's error, and a 401 as ours where the table says", async () => {
    const notFound = recorded({ status: 404, body: refusal(404, 'resource_not_found') });
    await expect(
      routeSender(notFound.http, { prefix: '' }).call(ROUTES.read, { params: { id: 'a' } }),
    ).rejects.toMatchObject({ code: 'resource_not_found' });

    const session = recorded({ status: 401, body: refusal(401, 'session_required') });
    await expect(
      routeSender(session.http, { prefix: '' }).call(ROUTES.read, { params: { id: 'a' } }),
    ).rejects.toMatchObject({ code: 'session_required' });
    await expect(
      routeSender(session.http, { prefix: '', unauthorizedIsOurs: true }).call(ROUTES.read, {
        params: { id: 'a' },
      }),
    ).rejects.toMatchObject({ code: 'internal_error', details: { dependency: 'billing' } });
  });
});
