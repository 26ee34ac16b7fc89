import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { GatewayError, toErrorBody } from '@gateway/contracts';
import type { Logger } from '@gateway/observability';
import { isDependencyUnavailable } from './dependency-errors.js';

/**
 * Client faults that Express, body-parser and the router raise as errors carrying a 4xx
 * `status`, by what went wrong. Their own messages may quote the input, so none is passed on.
 */
function clientFault(
  error: { type?: unknown; name?: unknown; code?: unknown },
  status: number,
): GatewayError {
  switch (error.type) {
    case 'entity.too.large':
      return new GatewayError('payload_too_large', 'Request body is too large');
    case 'entity.parse.failed':
      return new GatewayError('invalid_request_body', 'Request body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new GatewayError('unsupported_media_type', 'Request body encoding is not supported');
    case 'request.size.invalid':
      return new GatewayError(
        'invalid_request_body',
        'Request body length does not match its Content-Length',
      );
    case 'entity.verify.failed':
      return new GatewayError('invalid_request_body', 'Request body is not valid UTF-8');
  }
  if (error.name === 'URIError') {
    return new GatewayError('invalid_request_body', 'Malformed percent-encoding in the path');
  }
  if (typeof error.code === 'string' && /^(Z_|ERR__ERROR_FORMAT)/.test(error.code)) {
    return new GatewayError(
      'invalid_request_body',
      'Request body does not match its Content-Encoding',
    );
  }
  switch (status) {
    case 408:
      return new GatewayError('request_timeout', 'The request body did not arrive in time');
    case 413:
      return new GatewayError('payload_too_large', 'Request is too large');
    case 415:
      return new GatewayError('unsupported_media_type', 'Unsupported request media type');
    case 431:
      return new GatewayError('request_header_fields_too_large', 'Request headers are too large');
  }
  return new GatewayError('invalid_request_body', 'Malformed request');
}

/**
 * Turns framework errors into gateway errors: a client fault (any error with a 4xx status) is a
 * 4xx in the error shape, never a 500; a dependency unavailable for now (the database's
 * connection refused or cut) is 503 with `Retry-After`; everything else is an internal error.
 */
export function asGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  const fault = error as { status?: unknown; statusCode?: unknown } | null;
  const status = fault?.status ?? fault?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return clientFault(fault as object, status);
  }
  if (isDependencyUnavailable(error)) {
    return new GatewayError('service_unavailable', 'A dependency is unavailable; retry shortly', {
      details: { retryAfterS: 1 },
    });
  }
  return new GatewayError('internal_error', 'Internal error');
}

export const notFoundHandler = (): RequestHandler => (req, _res, next) => {
  next(new GatewayError('not_found', `No route for ${req.method} ${req.path}`));
};

export const errorHandler =
  (logger: Logger): ErrorRequestHandler =>
  (error, req, res, _next) => {
    const gatewayError = asGatewayError(error);
    if (gatewayError.code === 'internal_error') {
      logger.error({ err: error, requestId: (req as { id?: string }).id }, 'unhandled error');
    } else if (!(error instanceof GatewayError) && gatewayError.code === 'service_unavailable') {
      logger.warn({ err: error, requestId: (req as { id?: string }).id }, 'dependency unavailable');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    writeError(res, gatewayError);
  };

/** Writes `error` in the one shape, with `Retry-After` when its details carry one. */
function writeError(res: Response, error: GatewayError): void {
  const retryAfterS = error.details?.retryAfterS;
  if (typeof retryAfterS === 'number') res.setHeader('Retry-After', String(retryAfterS));
  res.status(error.status).json(toErrorBody(error));
}

/**
 * Answers `error` while the request's body is still arriving (stalled, or over a budget), and
 * closes the connection once the answer is written: the unread rest of the body could not be
 * told apart from a next request on it.
 */
export function answerBeforeBodyAndClose(res: Response, error: GatewayError): void {
  res.setHeader('Connection', 'close');
  writeError(res, error);
}
