import type { RequestHandler } from 'express';
import { GatewayError } from '@gateway/contracts';
import { jsonBodyParser } from '@gateway/runtime';

const JSON_TYPES = ['application/json', 'application/*+json'];

/** Whether the request carries a body at all (what body-parser's `type-is` checks too). */
export function hasBody(headers: { 'content-length'?: string; 'transfer-encoding'?: string }) {
  return (
    headers['transfer-encoding'] !== undefined ||
    (headers['content-length'] !== undefined && headers['content-length'] !== '0')
  );
}

/**
 * JSON bodies up to `limitBytes`. A body of another media type is 415; malformed JSON, bad
 * UTF-8, a bad Content-Encoding or excessive nesting is 400 and an oversized one 413 (the
 * runtime's parser and error mapping). No body at all leaves `req.body` undefined, which
 * validation refuses as "not a JSON object".
 */
export function jsonBody(limitBytes: number): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    if (hasBody(req.headers) && !req.is(JSON_TYPES)) {
      next(new GatewayError('unsupported_media_type', 'Request body must be application/json'));
      return;
    }
    next();
  };
  return [requireJson, ...jsonBodyParser({ limitBytes, type: JSON_TYPES })];
}
