import type { ErrorRequestHandler, RequestHandler } from 'express';
import { GatewayError, toErrorBody } from '@gateway/contracts';
import type { Logger } from '@gateway/observability';

/** Turns body-parser's and Express's own errors into gateway errors; the rest become 500s. */
export function asGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  const type = (error as { type?: unknown })?.type;
  if (type === 'entity.too.large')
    return new GatewayError('payload_too_large', 'Request body is too large');
  if (type === 'entity.parse.failed')
    return new GatewayError('invalid_request_body', 'Request body is not valid JSON');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new GatewayError('unsupported_media_type', 'Request body encoding is not supported');
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
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    const retryAfterS = gatewayError.details?.retryAfterS;
    if (typeof retryAfterS === 'number') res.setHeader('Retry-After', String(retryAfterS));
    res.status(gatewayError.status).json(toErrorBody(gatewayError));
  };
