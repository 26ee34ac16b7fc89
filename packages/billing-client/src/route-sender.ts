import { routePath, type Route, type RouteAnswer, type RouteInput } from '@gateway/contracts';
import { jsonOf, type InternalHttp, type InternalResponse } from '@gateway/runtime';
import { credentialRefused, errorFromAnswer } from './wire-errors.js';

/** How one call travels beyond its route and input. */
export interface SendOptions {
  /** Sent again after a failed connection (idempotent calls only); the table's rule otherwise. */
  retry?: boolean;
  /** An answer in another type than JSON (CSV). */
  accept?: 'text/csv';
}

/** What differs between billing's route tables as they are called. */
export interface RouteTableCalls {
  /** Where the table's paths are served (`BILLING_API_PREFIX`, …). */
  prefix: string;
  /** Whether a call of the route is retried when the call does not say (none by default). */
  retries?: (route: Route) => boolean;
  /**
   * A 401 is billing refusing our own credential (edge's fault, a 500), not the caller's
   * credential: the operator API, whose callers were authenticated by edge already.
   */
  unauthorizedIsOurs?: boolean;
}

/**
 * Calls of one of billing's route tables (ADR 0069): the route's path filled under the table's
 * prefix, its body and headers sent, billing's refusal (4xx/5xx) thrown as billing's error, the
 * answer typed by the route. One sender per table, so a call reads `call(route, input)`.
 */
export function routeSender(http: InternalHttp, table: RouteTableCalls) {
  const send = async <Called extends Route>(
    route: Called,
    input: RouteInput<Called>,
    options: SendOptions = {},
  ): Promise<InternalResponse> => {
    const retry = options.retry ?? table.retries?.(route);
    const headers = { ...input.headers, ...(options.accept ? { Accept: options.accept } : {}) };
    const answer = await http({
      method: route.method,
      path: `${table.prefix}${routePath(route, input.params, input.query)}`,
      ...(input.body === undefined ? {} : { body: input.body }),
      ...(Object.keys(headers).length === 0 ? {} : { headers }),
      ...(retry === undefined ? {} : { retry }),
    });
    if (answer.status === 401 && table.unauthorizedIsOurs) throw credentialRefused('billing');
    if (answer.status >= 400) throw errorFromAnswer('billing', answer);
    return answer;
  };
  /** The route's answer (`Answer` names it where the route leaves it open). */
  const call = async <Called extends Route, Answer = RouteAnswer<Called>>(
    route: Called,
    input: RouteInput<Called>,
    options?: SendOptions,
  ): Promise<Answer> => jsonOf<Answer>(await send(route, input, options));
  /** A call whose answer is nothing (204) or not needed. */
  const done = async <Called extends Route>(
    route: Called,
    input: RouteInput<Called>,
    options?: SendOptions,
  ): Promise<void> => {
    await send(route, input, options);
  };
  return { send, call, done };
}
