import { describe, expect, it } from '@jest/globals';
import {
  ChatCompletionRequestSchema,
  UsageListSchema,
  RESPONSE_ID_PATTERN,
  ajv,
  routeTemplate,
} from '@gateway/contracts';
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

interface Operation {
  parameters: { name: string; in: string; required: boolean; schema: unknown }[];
  requestBody?: unknown;
  responses: Record<string, { content: Record<string, unknown> }>;
  security?: unknown;
}

const doc = buildOpenApiDocument() as unknown as Doc;

/** The spec's public routes, written out: a route the table dropped would go unnoticed otherwise. */
const SPEC_ROUTES: [string, string][] = [
  ['post', '/v1/chat/completions'],
  ['post', '/v1/responses'],
  ['get', '/v1/responses/{response_id}'],
  ['delete', '/v1/responses/{response_id}'],
  ['post', '/v1/responses/{response_id}/cancel'],
  ['get', '/v1/responses/{response_id}/input_items'],
  ['get', '/v1/usage'],
  ['get', '/v1/requests/{request_id}'],
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
    for (const [method, path] of SPEC_ROUTES) {
      expect(doc.paths[path]?.[method]).toBeDefined();
    }
    for (const route of ADMIN_ROUTES) {
      const path = `/admin/v1${routeTemplate(route)}`;
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
      const path = `/admin/v1${routeTemplate(route)}`;
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

  it('describes each public route from its contract: parameters, bodies, streams, uploads', () => {
    const chat = doc.paths['/v1/chat/completions']!.post as unknown as Operation;
    expect(chat.parameters.map((parameter) => parameter.name)).toEqual(['Idempotency-Key']);
    expect(chat.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: ref('ChatCompletionRequest') } },
    });
    expect(chat.responses['200']!.content).toEqual({
      'application/json': { schema: ref('ChatCompletion') },
      'text/event-stream': { schema: { type: 'string' }, itemSchema: ref('ChatCompletionChunk') },
    });

    const read = doc.paths['/v1/responses/{response_id}/input_items']!.get as unknown as Operation;
    expect(read.parameters).toEqual([
      expect.objectContaining({ name: 'response_id', in: 'path', required: true }),
      expect.objectContaining({ name: 'limit', in: 'query', required: false }),
      expect.objectContaining({ name: 'order', in: 'query', required: false }),
      expect.objectContaining({ name: 'after', in: 'query', required: false }),
    ]);
    expect(read.parameters[0]!.schema).toEqual({ type: 'string', pattern: RESPONSE_ID_PATTERN });

    const native = doc.paths['/v1/inference/{model}']!.post as unknown as Operation;
    expect(native.responses['200']!.content['application/json']).toEqual({
      schema: { oneOf: [ref('NativeInferenceResult'), ref('NativeInferenceAck')] },
    });

    const upload = doc.paths['/v1/audio/transcriptions']!.post as unknown as Operation;
    const form = (upload.requestBody as { content: Record<string, { schema: object }> }).content;
    expect(form['multipart/form-data']!.schema).toMatchObject({
      properties: { file: { type: 'string' }, model: { type: 'string' } },
      required: ['model', 'file'],
    });
    expect(Object.keys(upload.responses['200']!.content)).toEqual([
      'application/json',
      'text/plain',
    ]);

    const document = doc.paths['/v1/openapi.json']!.get as unknown as Operation;
    expect(document.security).toEqual([]);
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
