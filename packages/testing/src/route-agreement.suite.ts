import { expect } from '@jest/globals';
import type request from 'supertest';
import {
  compile,
  describeViolation,
  routePath,
  routeStatus,
  type Route,
  type RouteAnswer,
  type RouteInput,
  type RouteMethod,
  type SchemaViolation,
} from '@gateway/contracts';

/** A schema of a route (its body, its answer). */
type TSchema = NonNullable<Route['answer']>;

/** The route's request to `api` under `prefix`: its path filled, the input's query, headers, body. */
export function routeRequest<Called extends Route>(
  api: ReturnType<typeof request>,
  prefix: string,
  route: Called,
  input: RouteInput<Called>,
): request.Test {
  const verb = route.method.toLowerCase() as Lowercase<RouteMethod>;
  const sent = api[verb](`${prefix}${routePath(route, input.params, input.query)}`);
  sent.set(input.headers ?? {});
  return input.body === undefined ? sent : sent.send(input.body as object);
}

/**
 * What a route table's agreement test checks (ADR 0069): each call answers with its route's
 * status and an answer its route's schema accepts, and every route of the table was called. A
 * route added to a table without a call in its test fails `missed`. Every route table's agreement
 * test uses it: billing's, the dispatcher's, edge's dashboard API and the public API.
 */
export class RouteAgreement {
  readonly #called = new Set<Route>();

  /** Checks one answer of `route` and counts the route as called. */
  check(route: Route, status: number, body: unknown): void {
    const name = `${route.method} ${route.path}`;
    expect({ route: name, status }).toEqual({ route: name, status: routeStatus(route) });
    expect({ route: name, violation: answerViolation(route, body) }).toEqual({ route: name });
    this.#called.add(route);
  }

  /** Sends a request of `route` (`routeRequest`, its headers set), checks it, types its answer. */
  async answerOf<Called extends Route>(
    route: Called,
    sent: request.Test,
  ): Promise<RouteAnswer<Called>> {
    const answer = await sent;
    this.check(route, answer.status, answer.body);
    return answer.body as RouteAnswer<Called>;
  }

  /** The routes of `routes` not called yet, as `METHOD /path`. */
  missed(routes: readonly Route[]): string[] {
    return routes
      .filter((route) => !this.#called.has(route))
      .map((route) => `${route.method} ${route.path}`);
  }
}

/** Why the answer fails its route's schema; undefined when it passes or the route has none. */
function answerViolation(route: Route, body: unknown): SchemaViolation | undefined {
  return route.answer === undefined ? undefined : schemaViolation(route.answer, body);
}

/** Why `value` fails `schema`; undefined when it passes. */
export function schemaViolation(schema: TSchema, value: unknown): SchemaViolation | undefined {
  // Ajv keeps each schema object it compiled: a schema checked again is not compiled again.
  const validate = compile(schema);
  return validate(value) ? undefined : describeViolation(validate.errors ?? []);
}
