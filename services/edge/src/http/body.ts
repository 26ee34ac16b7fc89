import express, { type RequestHandler } from 'express';
import { GatewayError } from '@gateway/contracts';

const JSON_TYPES = ['application/json', 'application/*+json'];

/** Whether the request carries a body at all (what body-parser's `type-is` checks too). */
export function hasBody(headers: { 'content-length'?: string; 'transfer-encoding'?: string }) {
  return (
    headers['transfer-encoding'] !== undefined ||
    (headers['content-length'] !== undefined && headers['content-length'] !== '0')
  );
}

/**
 * JSON bodies up to `limitBytes`. A body of another media type is 415; malformed JSON is 400 and
 * an oversized one 413 (the runtime maps body-parser's errors). No body at all leaves `req.body`
 * undefined, which validation refuses as "not a JSON object".
 */
export function jsonBody(limitBytes: number): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    if (hasBody(req.headers) && !req.is(JSON_TYPES)) {
      next(new GatewayError('unsupported_media_type', 'Request body must be application/json'));
      return;
    }
    next();
  };
  return [requireJson, express.json({ limit: limitBytes, type: JSON_TYPES })];
}
