import { describe, expect, it } from '@jest/globals';
import { ChatCompletionRequestSchema, UsageListSchema, ajv } from '@gateway/contracts';
import { ADMIN_ROUTES } from '../admin/admin-routes.js';
import { REQUEST_SCHEMAS, ref, toComponent } from './components.js';
import { buildOpenApiDocument } from './openapi.js';

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>
  >;
  components: { schemas: Record<string, unknown>; responses: Record<string, unknown> };
};

const doc = buildOpenApiDocument() as unknown as Doc;

const PUBLIC_ROUTES: [string, string][] = [
  ['post', '/v1/chat/completions'],
  ['post', '/v1/inference/{model}'],
  ['post', '/v1/scoped-jwt'],
  ['get', '/v1/scoped-jwt'],
  ['delete', '/v1/scoped-jwt'],
  ['get', '/v1/user/balance'],
  ['get', '/v1/key'],
  ['get', '/v1/models'],
  ['get', '/v1/models/{model}'],
  ['post', '/v1/embeddings'],
  ['post', '/v1/images/generations'],
  ['post', '/v1/audio/speech'],
  ['post', '/v1/audio/transcriptions'],
  ['post', '/v1/video/generations'],
  ['post', '/v1/rerank'],
  ['get', '/v1/openapi.json'],
];

function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsIn(v, found));
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') found.push(inner);
      else refsIn(inner, found);
    }
  }
  return found;
}

function resolve(pointer: string): unknown {
  return pointer
    .slice(2)
    .split('/')
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 and covers every public and operator route', () => {
    expect(doc.openapi).toBe('3.1.0');
    for (const [method, path] of PUBLIC_ROUTES) {
      expect(doc.paths[path]?.[method]).toBeDefined();
    }
    for (const route of ADMIN_ROUTES) {
      const path = `/admin/v1${route.path.replace(/[:*]([A-Za-z]+)/g, '{$1}')}`;
      expect(doc.paths[path]?.[route.method.toLowerCase()]).toBeDefined();
    }
  });

  it('embeds the very schemas the validators compile', () => {
    for (const schema of REQUEST_SCHEMAS) {
      expect(doc.components.schemas[String(schema.$id)]).toEqual(toComponent(schema));
    }
    const chat = doc.components.schemas.ChatCompletionRequest as {
      properties: Record<string, { minimum?: number; maximum?: number; maxItems?: number }>;
    };
    expect(chat.properties.temperature).toMatchObject({ minimum: 0, maximum: 2 });
    expect(chat).toEqual(toComponent(ChatCompletionRequestSchema));
  });

  it("names each operator answer's contract schema, embedded named schemas as $refs", () => {
    const answered = ADMIN_ROUTES.filter((route) => route.answer);
    expect(answered.length).toBeGreaterThan(10);
    for (const route of answered) {
      const path = `/admin/v1${route.path.replace(/[:*]([A-Za-z]+)/g, '{$1}')}`;
      const ok =
        doc.paths[path]![route.method.toLowerCase()]!.responses[String(route.status ?? 200)];
      const name = String(route.answer!.$id);
      expect(ok).toMatchObject({ content: { 'application/json': { schema: ref(name) } } });
      expect(JSON.stringify(doc.components.schemas[name])).not.toContain('"$id"');
    }
    const list = doc.components.schemas.AdminAccountList as {
      properties: { accounts: { items: unknown } };
    };
    expect(list.properties.accounts.items).toEqual(ref('DashboardAccount'));
    expect(doc.components.schemas.UsageList).toEqual(toComponent(UsageListSchema));
  });

  it('validates like the validators: the document is the contract', () => {
    const validate = ajv.compile(doc.components.schemas.ChatCompletionRequest as object);
    const base = { model: 'm', messages: [{ role: 'user', content: 'x' }] };
    expect(validate(base)).toBe(true);
    expect(validate({ ...base, temperature: 2.5 })).toBe(false);
    expect(validate({ ...base, stop: ['a', 'b', 'c', 'd', 'e'] })).toBe(false);
    // The full message schema, tool round trips included.
    const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } };
    const roundTrip = [
      { role: 'developer', content: [{ type: 'text', text: 'be brief' }] },
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'c1', content: 'r' },
    ];
    expect(validate({ ...base, messages: roundTrip })).toBe(true);
    expect(validate({ ...base, messages: [{ role: 'tool', content: 'r' }] })).toBe(false);
  });

  it('documents every chat role and content part', () => {
    const chat = doc.components.schemas.ChatCompletionRequest as {
      properties: { messages: { items: { oneOf: { properties: Record<string, unknown> }[] } } };
    };
    const branches = chat.properties.messages.items.oneOf;
    const roles = branches.map((branch) => (branch.properties.role as { const: string }).const);
    expect(roles).toEqual(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
    expect(JSON.stringify(branches)).toContain('"image_url"');
    expect(JSON.stringify(branches)).toContain('"tool_call_id"');
  });

  it('resolves every $ref and gives every operation an error response in the one shape', () => {
    for (const pointer of refsIn(doc)) {
      expect(pointer.startsWith('#/')).toBe(true);
      expect(resolve(pointer)).toBeDefined();
    }
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (path === '/v1/openapi.json') continue;
        const errors = Object.keys(operation.responses).filter((status) => Number(status) >= 400);
        expect({ path, method, errors: errors.length > 0 }).toEqual({ path, method, errors: true });
      }
    }
    const tooMany = doc.components.responses.TooManyRequests as {
      headers: object;
      content: object;
    };
    expect(Object.keys(tooMany.headers)).toEqual(
      expect.arrayContaining([
        'Retry-After',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
      ]),
    );
    expect(tooMany.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } },
    });
  });
});
