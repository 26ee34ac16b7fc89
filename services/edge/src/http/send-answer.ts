import type { Response } from 'express';
import type { IdempotencyGuard } from './idempotency.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends a successful answer, keeping it first for its Idempotency-Key (if any): were the
 * answer sent first and edge stopped before keeping it, a retry would run — and charge — again.
 * An answer whose claim billing says was lost is not sent (the guard throws: its hold was
 * refunded), unless `sendUnkept`: what it acknowledges happens anyway (an async job's webhook).
 */
export async function sendJson(
  res: Response,
  status: number,
  body: unknown,
  guard: IdempotencyGuard | null,
  { sendUnkept = false }: { sendUnkept?: boolean } = {},
): Promise<void> {
  const text = JSON.stringify(body);
  const kept = guard?.complete({ status, contentType: JSON_TYPE, body: text, encoding: 'utf8' });
  await (sendUnkept ? kept?.catch(() => undefined) : kept);
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
