import { describe, expect, it } from '@jest/globals';
import type { TSchema } from '@sinclair/typebox';
import {
  PUBLIC_ROUTES,
  publicAnswerSchemas,
  publicMethodsAt,
  publicRequestSchemas,
  type PublicRoute,
} from './public-routes.js';
import { routeParamNames } from './routes.js';

const routes: PublicRoute[] = Object.values(PUBLIC_ROUTES);

/** Every schema inside `schema` (itself included) that has a name. */
function named(schema: unknown, found: TSchema[] = []): TSchema[] {
  if (Array.isArray(schema)) schema.forEach((item) => named(item, found));
  else if (schema !== null && typeof schema === 'object') {
    if (typeof (schema as TSchema).$id === 'string') found.push(schema as TSchema);
    Object.values(schema).forEach((inner) => named(inner, found));
  }
  return found;
}

describe('PUBLIC_ROUTES', () => {
  it('describes only path parameters its paths have', () => {
    for (const route of routes) {
      const described = Object.keys(route.params ?? {});
      expect({ path: route.path, described }).toEqual({
        path: route.path,
        described: described.filter((name) => routeParamNames(route).includes(name)),
      });
    }
  });

  it('declares each method once per path, and names them for a 405', () => {
    const declared = routes.map((route) => `${route.method} ${route.path}`);
    expect(new Set(declared).size).toBe(declared.length);
    expect(publicMethodsAt('/scoped-jwt')).toEqual(['POST', 'GET', 'DELETE']);
    expect(publicMethodsAt('/responses/:response_id')).toEqual(['GET', 'DELETE']);
    expect(publicMethodsAt('/nowhere')).toEqual([]);
  });

  it('gives one name to one schema: the OpenAPI components cannot shadow each other', () => {
    const schemas = [...publicRequestSchemas(), ...publicAnswerSchemas()].flatMap((s) => named(s));
    const byName = new Map<string, TSchema>();
    for (const schema of schemas) {
      const first = byName.get(String(schema.$id)) ?? schema;
      byName.set(String(schema.$id), first);
      expect({ name: schema.$id, same: first === schema }).toEqual({
        name: schema.$id,
        same: true,
      });
    }
    expect(byName.has('ServiceBlock')).toBe(true);
    expect(byName.has('NativeInferenceAck')).toBe(true);
  });

  it('names every JSON body and every answer it publishes as a component', () => {
    for (const route of routes) {
      if (route.body)
        expect({ path: route.path, id: route.body.$id }).toEqual({
          path: route.path,
          id: expect.any(String),
        });
    }
    const bodies = publicRequestSchemas().map((schema) => schema.$id);
    expect(bodies).toEqual(
      expect.arrayContaining(['ChatCompletionRequest', 'TranscriptionRequest']),
    );
  });
});
