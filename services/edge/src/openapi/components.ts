import type { TSchema } from '@sinclair/typebox';
import {
  ERROR_CATALOG,
  ErrorBodySchema,
  KeyInfoSchema,
  publicAnswerSchemas,
  publicRequestSchemas,
} from '@gateway/contracts';
import { ADMIN_ANSWER_SCHEMAS, ADMIN_ROUTES } from '../admin/admin-routes.js';

/**
 * Every request schema edge validates with, by name: the very objects the validators compile,
 * taken from the public and the operator route tables.
 */
export const REQUEST_SCHEMAS: readonly TSchema[] = [
  ...new Map(
    [...publicRequestSchemas(), ...ADMIN_ROUTES.flatMap((route) => route.body ?? [])].map(
      (schema) => [schema.$id, schema],
    ),
  ).values(),
];

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** JSON Schema as OpenAPI 3.1 embeds it: plain JSON, named by the key instead of `$id`. */
export function toComponent(schema: TSchema): Record<string, unknown> {
  const plain = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  delete plain.$id;
  return pointRefsAtComponents(plain) as Record<string, unknown>;
}

function pointRefsAtComponents(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pointRefsAtComponents);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) =>
      key === '$ref' && typeof inner === 'string' && !inner.startsWith('#')
        ? [key, `#/components/schemas/${inner}`]
        : [key, pointRefsAtComponents(inner)],
    ),
  );
}

export function schemaComponents(): Record<string, unknown> {
  const named = [ErrorBodySchema, ...REQUEST_SCHEMAS];
  return {
    // `GET /v1/key`'s answer embeds the operator API's BudgetView: the same component.
    ...answerComponents([...ADMIN_ANSWER_SCHEMAS, KeyInfoSchema, ...publicAnswerSchemas()]),
    ...Object.fromEntries(named.map((schema) => [String(schema.$id), toComponent(schema)])),
  };
}

/**
 * Answer schemas as components: a schema one embeds that has a name of its own (`$id`, e.g. the
 * account inside the account list) becomes a `$ref` to its own component, added too.
 */
function answerComponents(schemas: readonly TSchema[]): Record<string, unknown> {
  const components: Record<string, unknown> = {};
  const visit = (value: unknown, root: boolean): unknown => {
    if (Array.isArray(value)) return value.map((item) => visit(item, false));
    if (value === null || typeof value !== 'object') return value;
    const id = (value as { $id?: unknown }).$id;
    if (typeof id === 'string' && !root) {
      if (!(id in components)) components[id] = visit(value, true);
      return ref(id);
    }
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== '$id')
        .map(([key, inner]) => [key, visit(inner, false)]),
    );
  };
  for (const schema of schemas) components[String(schema.$id)] = visit(toComponent(schema), true);
  return components;
}

const header = (description: string) => ({ description, schema: { type: 'integer' } });

/** The tightest of the account's, the key's and the scoped token's limits. */
export const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': header(
    "Requests allowed in the current window: the tightest of the account's, the key's and the scoped token's.",
  ),
  'X-RateLimit-Remaining': header('Requests left in the window.'),
  'X-RateLimit-Reset': header('Unix time in milliseconds when the window resets.'),
  'X-RateLimit-Limit-Tokens': header(
    'Tokens per minute of the key or scoped token (the tightest); only when one is set.',
  ),
  'X-RateLimit-Remaining-Tokens': header(
    'Tokens left in the window after this request reserved its prompt and output cap.',
  ),
  'X-RateLimit-Reset-Tokens': header('Unix time in milliseconds when the tokens window resets.'),
};
const REQUEST_ID = { description: 'Request id (echoed or generated).', schema: { type: 'string' } };

/** One reusable error response per status, all with the one error body. */
export const ERROR_RESPONSES: Record<string, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  PaymentRequired: 402,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  Conflict: 409,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  TooManyRequests: 429,
  ServerError: 500,
  Unavailable: 503,
};

export function errorResponseComponents(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(ERROR_RESPONSES).map(([name, status]) => {
      const codes = Object.entries(ERROR_CATALOG)
        .filter(([, entry]) => entry.status === status)
        .map(([code]) => `\`${code}\``);
      const headers: Record<string, unknown> = {
        ...RATE_LIMIT_HEADERS,
        'X-Request-Id': REQUEST_ID,
      };
      if (status === 429 || status === 503) {
        headers['Retry-After'] = header('Seconds to wait before retrying.');
      }
      return [
        name,
        {
          description: `Error (${codes.join(', ')})`,
          headers,
          content: { 'application/json': { schema: ref('ErrorBody') } },
        },
      ];
    }),
  );
}

export const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => {
      const name = Object.keys(ERROR_RESPONSES).find((n) => ERROR_RESPONSES[n] === status);
      return [String(status), { $ref: `#/components/responses/${name}` }];
    }),
  );

export const ok = (description: string, content: Record<string, unknown>) => ({
  description,
  headers: { ...RATE_LIMIT_HEADERS, 'X-Request-Id': REQUEST_ID },
  content,
});

export const json = (schema: unknown) => ({ 'application/json': { schema } });
