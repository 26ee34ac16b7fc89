import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ERROR_CATALOG, isErrorCode } from '@gateway/contracts';
import {
  CHAT_MODEL,
  NATIVE_MODEL,
  errorOf,
  eventLoopStallWhile,
  settledHolds,
  startAbuseStack,
  type AbuseStack,
  type RawAnswer,
} from './abuse-stack.js';

/*
 * Property-based fuzzing of every public and operator route, against the deployed shape: random
 * and hostile paths, headers and bodies. Whatever comes in, the answer is a documented status in
 * the documented shape (never a 5xx for client input), `/healthz` stays responsive throughout,
 * and at the end the ledger's invariants hold and no hold is left pending.
 */

let stack: AbuseStack;
let accountId: string;

beforeAll(async () => {
  stack = await startAbuseStack();
  accountId = stack.accountId;
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

/** Every route, with a placeholder where a hostile path segment goes. */
const ROUTES: [string, string][] = [
  ['POST', '/v1/chat/completions'],
  ['POST', `/v1/inference/${NATIVE_MODEL}`],
  ['POST', '/v1/inference/{seg}'],
  ['POST', '/v1/embeddings'],
  ['POST', '/v1/images/generations'],
  ['POST', '/v1/audio/speech'],
  ['POST', '/v1/audio/transcriptions'],
  ['POST', '/v1/video/generations'],
  ['POST', '/v1/rerank'],
  ['POST', '/v1/scoped-jwt'],
  ['GET', '/v1/scoped-jwt?jwt={seg}'],
  ['DELETE', '/v1/scoped-jwt?jwt={seg}'],
  ['GET', '/v1/user/balance'],
  ['GET', '/v1/models'],
  ['GET', '/v1/models/{seg}'],
  ['GET', '/v1/openapi.json'],
  ['GET', '/v1/usage?group_by=model&from={seg}'],
  ['GET', '/admin/v1/usage?account={seg}'],
  ['GET', '/admin/v1/usage/requests?limit=5&cursor={seg}'],
  ['GET', '/admin/v1/accounts'],
  ['POST', '/admin/v1/accounts'],
  ['GET', '/admin/v1/accounts/{seg}'],
  ['PATCH', '/admin/v1/accounts/{seg}'],
  ['POST', '/admin/v1/accounts/{seg}/api-keys'],
  ['POST', '/admin/v1/accounts/{seg}/credits'],
  ['POST', '/admin/v1/accounts/{seg}/suspend'],
  ['GET', '/admin/v1/accounts/{seg}/statement'],
  ['GET', '/admin/v1/accounts/{seg}/webhook-secrets'],
  ['PUT', '/admin/v1/models/{seg}'],
  ['GET', '/admin/v1/models'],
  ['GET', '/admin/v1/ledger/entries?cursor={seg}'],
  ['GET', '/admin/v1/ledger/check'],
  ['POST', '/admin/v1/accounts/{seg}/invitations'],
  ['POST', '/admin/v1/operator-users'],
  ['POST', '/dashboard/api/session'],
  ['GET', '/dashboard/api/session'],
  ['POST', '/dashboard/api/invitations/accept'],
  ['GET', '/dashboard/api/overview'],
  ['DELETE', '/dashboard/api/api-keys/{seg}'],
  ['GET', '/dashboard/api/operator/accounts/{seg}'],
  ['POST', '/dashboard/api/scoped-tokens/{seg}/revoke'],
  ['POST', '/dashboard/api/webhooks/deliveries/{seg}/redeliver'],
  ['GET', '/dashboard/api/statement?from={seg}'],
  ['PUT', '/dashboard/api/operator/models/{seg}'],
  ['GET', '/{seg}'],
];

const hostileSegment = fc.oneof(
  fc.constantFrom(
    '%2e%2e',
    '..%2f..%2fadmin%2fledger%2fcheck',
    '%zz',
    '%c0%ae',
    '%00',
    '%ff%fe',
    'x%2fy',
    '%252e%252e',
    '..%5c',
    'a'.repeat(3_000),
    encodeURIComponent('😀\u0000'),
    'abuse/chat',
  ),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc
    .string({ unit: 'binary', maxLength: 20 })
    .map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))),
);

const json = (value: unknown) => JSON.stringify(value);
const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

const hostileBody = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.jsonValue({ maxDepth: 3 }).map((value) => json({ model: CHAT_MODEL, messages: value })),
  fc
    .record(
      {
        model: fc.oneof(fc.constant(CHAT_MODEL), fc.string({ maxLength: 30 })),
        messages: fc.array(
          fc.record({
            role: fc.constantFrom('user', 'system', 'assistant', 'tool', 'x'),
            content: fc.oneof(fc.string({ maxLength: 50 }), fc.jsonValue({ maxDepth: 2 })),
          }),
          { maxLength: 3 },
        ),
        max_tokens: fc.oneof(fc.integer({ min: -5, max: 3 }), fc.double(), fc.string()),
        stream: fc.oneof(fc.boolean(), fc.constant('yes')),
        temperature: fc.oneof(fc.double({ noNaN: false }), fc.integer()),
        best_of: fc.integer({ min: 1, max: 5 }),
      },
      { requiredKeys: ['model'] },
    )
    .map(json),
  fc.nat({ max: 5_000 }).map(deep),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.constantFrom(
    '{"model":"abuse/chat","messages":[{"role":"user","content":"\\ud800"}]}',
    '{"model":"abuse/chat\\u0000"}',
    '{"input":"x","parameters":{"best_of":4}}',
    '{"name":"n","amount_dzd":"1e309","reference":"r"}',
    '[]',
    'null',
    '',
  ),
);

const hostileHeaders = fc.record(
  {
    auth: fc.constantFrom('key', 'admin', 'none', 'garbage', 'jwt-garbage', 'basic'),
    contentType: fc.constantFrom(
      'application/json',
      'application/json; charset=latin1',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded',
      'application/merge-patch+json',
    ),
    encoding: fc.constantFrom(undefined, 'gzip', 'deflate', 'br', 'identity', 'zstd'),
    idempotencyKey: fc.option(fc.string({ minLength: 1, maxLength: 300 }), { nil: undefined }),
  },
  { requiredKeys: ['auth', 'contentType'] },
);

function authorization(kind: string): string | undefined {
  switch (kind) {
    case 'key':
      return `Bearer ${stack.apiKey}`;
    case 'admin':
      return `Bearer ${stack.adminToken}`;
    case 'garbage':
      return 'Bearer \u00ff\u00fe garbage';
    case 'jwt-garbage':
      return 'Bearer jwt:eyJhbGciOiJub25lIn0.e30.';
    case 'basic':
      return 'Basic dXNlcjpwYXNz';
    default:
      return undefined;
  }
}

/** Statuses the API documents; 2xx answers are fine whatever they hold. */
const DOCUMENTED = new Set([
  200, 201, 202, 204, 400, 401, 402, 403, 404, 405, 408, 409, 413, 415, 429, 431,
]);

function assertDocumented(answer: RawAnswer, what: string): void {
  if (!DOCUMENTED.has(answer.status)) {
    throw new Error(`${what} → ${answer.status}: ${answer.body.slice(0, 300)}`);
  }
  if (answer.status < 400) return;
  const error = errorOf(answer);
  if (!isErrorCode(error.code) || ERROR_CATALOG[error.code].status !== answer.status) {
    throw new Error(`${what} → ${answer.status} with code ${error.code}`);
  }
}

describe('fuzzing every route with hostile input', () => {
  it('answers documented statuses in the error shape, keeps /healthz responsive, loses no money', async () => {
    const request = fc.record({
      route: fc.constantFrom(...ROUTES),
      segment: hostileSegment,
      body: hostileBody,
      headers: hostileHeaders,
    });
    const { stallMs } = await eventLoopStallWhile(stack, () =>
      fc.assert(
        fc.asyncProperty(request, async ({ route: [method, template], segment, body, headers }) => {
          const path = template.replace('{seg}', segment).replace('{account}', accountId);
          const auth = authorization(headers.auth);
          const answer = await stack.send({
            method,
            path,
            headers: {
              'Content-Type': headers.contentType,
              ...(auth === undefined ? {} : { Authorization: auth }),
              ...(headers.encoding === undefined ? {} : { 'Content-Encoding': headers.encoding }),
              ...(headers.idempotencyKey === undefined
                ? {}
                : { 'Idempotency-Key': encodeURIComponent(headers.idempotencyKey).slice(0, 300) }),
            },
            ...(method === 'GET' ? {} : { body }),
          });
          assertDocumented(answer, `${method} ${path.slice(0, 120)}`);
        }),
        { numRuns: 1_000, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31) },
      ),
    );
    // A stall, as edge's own event-loop delay histogram saw it (see abuse.test.ts).
    expect(stallMs).toBeLessThan(2_000);
    expect((await stack.send({ path: '/healthz' })).status).toBe(200);
    expect(await settledHolds(stack)).toBe(0);
    expect(await stack.ledgerCheck()).toEqual({ ok: true, violations: [] });
  }, 240_000);
});
