import type { Response } from 'express';
import type { IdempotencyGuard } from './idempotency.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends a successful answer, keeping it first for its Idempotency-Key (if any): were the
 * answer sent first and edge stopped before keeping it, a retry would run — and charge — again.
 */
export async function sendJson(
  res: Response,
  status: number,
  body: unknown,
  guard: IdempotencyGuard | null,
): Promise<void> {
  const text = JSON.stringify(body);
  await guard?.complete({ status, contentType: JSON_TYPE, body: text, encoding: 'utf8' });
  res.status(status).set('Content-Type', JSON_TYPE).send(text);
}

/** `sendJson` for a binary answer (speech, images as bytes), kept base64-encoded. */
export async function sendBytes(
  res: Response,
  contentType: string,
  bytes: Buffer,
  guard: IdempotencyGuard | null,
): Promise<void> {
  await guard?.complete({
    status: 200,
    contentType,
    body: bytes.toString('base64'),
    encoding: 'base64',
  });
  res.status(200).set('Content-Type', contentType).send(bytes);
}
