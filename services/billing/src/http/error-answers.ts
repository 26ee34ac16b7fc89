/**
 * What billing answers for a refusal or failure, in one place: the error body and status of the
 * one error handler (@gateway/runtime), plus the rate-limit decision as `X-RateLimit-*` headers.
 * A batch route answers each item as its single route would (`batchItemAnswer`).
 */
import type { ErrorRequestHandler } from 'express';
import type { Logger } from '@gateway/observability';
import { GatewayError, rateLimitHeaders, type BatchItemAnswer } from '@gateway/contracts';
import { asGatewayError, errorAnswerOf, rateLimitDecisionOf } from '@gateway/runtime';

/**
 * One batch item's answer: 200 and `work`'s result, or the status, headers and error body the
 * single route's error handlers would have sent (an internal error is logged, as they log it).
 */
export async function batchItemAnswer(
  log: Logger,
  work: () => Promise<unknown>,
): Promise<BatchItemAnswer> {
  try {
    return { status: 200, body: await work() };
  } catch (error) {
    return errorItemAnswer(error, log);
  }
}

export function errorItemAnswer(error: unknown, log: Logger): BatchItemAnswer {
  const gatewayError = asGatewayError(error);
  if (gatewayError.code === 'internal_error') log.error({ err: error }, 'batch item failed');
  else if (!(error instanceof GatewayError) && gatewayError.code === 'service_unavailable') {
    log.warn({ err: error }, 'batch item failed: dependency unavailable');
  }
  return errorAnswerOf(gatewayError);
}

/**
 * Errors of `/authenticate` and `/admissions` carry the rate-limit decision in `details` (as
 * `details.rateLimit`; a 429: `limit`, `remaining`, `resetMs`). The error body has no room for
 * it, so it travels as the `X-RateLimit-*` headers edge repeats to its client. The error itself
 * continues to the one error handler.
 */
export const rateLimitHeadersOnError: ErrorRequestHandler = (error, _req, res, next) => {
  const decision = error instanceof GatewayError ? rateLimitDecisionOf(error.details) : undefined;
  if (decision && !res.headersSent) res.set(rateLimitHeaders(decision));
  next(error);
};
