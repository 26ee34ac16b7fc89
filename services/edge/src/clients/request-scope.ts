import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestHandler } from 'express';

/**
 * The request id of the HTTP request being served, for calls made on its behalf: billing and
 * the dispatcher receive it as `X-Request-Id` and log it, so one id follows a request across
 * services (decisions: Foundation 8).
 */
const scope = new AsyncLocalStorage<{ requestId: string }>();

export const requestScope: RequestHandler = (req, _res, next) => {
  const requestId = (req as { id?: string }).id;
  if (requestId === undefined) next();
  else scope.run({ requestId }, next);
};

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}
