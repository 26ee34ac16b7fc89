import { isUtf8 } from 'node:buffer';
import express, { type RequestHandler } from 'express';
import { GatewayError, toErrorBody } from '@gateway/contracts';

/**
 * JSON bodies for every service: body-parser bounded by `limitBytes`, then checks that keep a
 * hostile body from turning into a 500 further down. The bytes must be valid UTF-8 (body-parser
 * would silently replace bad bytes); nesting is bounded (a 10 KB body nested 5,000 levels deep
 * was admitted, then could not be serialised); and no string, key or value, may hold a NUL or an
 * unpaired surrogate, which PostgreSQL refuses and UTF-8 cannot carry.
 */

/** Deeper than any real request (tool schemas nest a dozen levels), shallow enough to walk. */
export const JSON_MAX_DEPTH = 64;

// eslint-disable-next-line no-control-regex
const NUL = /\u0000/;
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function refuse(message: string): never {
  throw new GatewayError('invalid_request_body', message);
}

function checkString(value: string): void {
  if (NUL.test(value)) refuse('Strings must not contain the NUL character');
  if (UNPAIRED_SURROGATE.test(value)) refuse('Strings must not contain unpaired UTF-16 surrogates');
}

/** Walks a parsed JSON value, refusing what the services cannot carry. */
export function checkJsonValue(value: unknown, depth = 0): void {
  if (typeof value === 'string') {
    checkString(value);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (depth >= JSON_MAX_DEPTH) refuse(`JSON is nested deeper than ${JSON_MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    for (const item of value) checkJsonValue(item, depth + 1);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    checkString(key);
    checkJsonValue(item, depth + 1);
  }
}

/** A body that sends nothing for this long is cut (a stalled client must not hold a socket). */
export const BODY_IDLE_TIMEOUT_MS = 10_000;

/**
 * While the request body is read, a pause of more than `idleMs` answers 408 in the error shape
 * and closes the connection. Set just before a body is read, so time spent authenticating
 * before it does not count.
 */
export function bodyIdleTimeout(idleMs = BODY_IDLE_TIMEOUT_MS): RequestHandler {
  return (req, res, next) => {
    if (req.complete) {
      next();
      return;
    }
    req.setTimeout(idleMs, () => {
      if (!res.headersSent) {
        const error = new GatewayError('request_timeout', 'The request body stopped arriving');
        res.setHeader('Connection', 'close');
        res.status(error.status).json(toErrorBody(error));
      }
      req.socket.destroySoon();
    });
    // Once the body is in, the wait for the answer is not bounded by this timer.
    req.once('end', () => req.setTimeout(0));
    next();
  };
}

export interface JsonBodyOptions {
  limitBytes: number;
  /** Media types parsed as JSON (body-parser's `type`); `application/json` by default. */
  type?: string | string[];
}

/** The parser and its checks, in order. */
export function jsonBodyParser(options: JsonBodyOptions): RequestHandler[] {
  const parse = express.json({
    limit: options.limitBytes,
    type: options.type ?? 'application/json',
    // A plain error: body-parser reports it as `entity.verify.failed`, which errors.ts maps.
    verify: (_req, _res, buffer) => {
      if (!isUtf8(buffer)) throw new Error('invalid UTF-8');
    },
  });
  const check: RequestHandler = (req, _res, next) => {
    checkJsonValue(req.body);
    next();
  };
  return [bodyIdleTimeout(), parse, check];
}
