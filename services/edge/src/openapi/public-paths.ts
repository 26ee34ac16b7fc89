import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import {
  PUBLIC_API_PREFIX,
  PUBLIC_ROUTES,
  routeParamNames,
  routeStatus,
  routeTemplate,
  type PublicRoute,
} from '@gateway/contracts';
import { errors, json, ok, ref, toComponent } from './components.js';

/** The public API (`/v1`), from the same table edge mounts its routes from. */
export function publicPaths(): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of Object.values(PUBLIC_ROUTES) as PublicRoute[]) {
    const path = `${PUBLIC_API_PREFIX}${routeTemplate(route)}`;
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  return paths;
}

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Same key + same request within 24 h replays the first answer and charges once; another ' +
    'request under the key is 409. A stream cannot be replayed: a retry of one is 409.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

function operation(route: PublicRoute): Record<string, unknown> {
  const parameters = [
    ...routeParamNames(route).map((name) =>
      parameter(name, 'path', route.params?.[name] ?? Type.String(), true),
    ),
    ...queryParameters(route.query),
    ...(route.idempotent ? [IDEMPOTENCY_KEY] : []),
  ];
  return {
    summary: route.summary,
    ...(route.credential === 'none' ? { security: [] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...requestBody(route),
    responses: {
      // A route anyone may call is not counted: no rate-limit headers on its answer.
      [String(routeStatus(route))]:
        route.credential === 'none'
          ? { description: 'Result', content: answerContent(route) }
          : ok('Result', answerContent(route)),
      ...errors(...route.errors),
    },
  };
}

/** A parameter: its schema's description is the parameter's. */
function parameter(name: string, place: 'path' | 'query', schema: TSchema, required: boolean) {
  const { description, ...plain } = toComponent(schema);
  return {
    name,
    in: place,
    required,
    ...(typeof description === 'string' ? { description } : {}),
    schema: plain,
  };
}

function queryParameters(query: TObject | undefined) {
  if (query === undefined) return [];
  const required = new Set(query.required ?? []);
  return Object.entries(query.properties).map(([name, schema]) =>
    parameter(name, 'query', schema, required.has(name)),
  );
}

function requestBody(route: PublicRoute): Record<string, unknown> {
  if (route.body !== undefined) {
    return { requestBody: { required: true, content: json(ref(String(route.body.$id))) } };
  }
  if (route.upload === undefined) return {};
  const fields = toComponent(route.upload.fields) as {
    properties: Record<string, unknown>;
    required?: string[];
  };
  const schema = {
    ...fields,
    properties: {
      ...fields.properties,
      [route.upload.file]: { type: 'string', contentMediaType: 'application/octet-stream' },
    },
    required: [...(fields.required ?? []), route.upload.file],
  };
  return { requestBody: { required: true, content: { 'multipart/form-data': { schema } } } };
}

function answerContent(route: PublicRoute): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  if (route.answer !== undefined) Object.assign(content, json(schemaOrRef(route.answer)));
  if (route.events !== undefined) {
    content['text/event-stream'] = {
      schema: { type: 'string' },
      itemSchema: schemaOrRef(route.events),
    };
  }
  for (const [type, schema] of Object.entries(route.media ?? {})) {
    content[type] = { schema: toComponent(schema) };
  }
  return content;
}

/** A named schema as its component's `$ref`; a union of named ones as `oneOf` them. */
function schemaOrRef(schema: TSchema): unknown {
  if (schema.$id !== undefined) return ref(schema.$id);
  const members = (schema.anyOf ?? schema.oneOf) as TSchema[] | undefined;
  if (members?.every((member) => member.$id !== undefined)) {
    return { oneOf: members.map((member) => ref(String(member.$id))) };
  }
  return toComponent(schema);
}
