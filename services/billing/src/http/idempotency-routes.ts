import express, { type Router } from 'express';
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { createBodyValidator } from '@gateway/contracts';
import { jsonBodyParser } from '@gateway/runtime';
import type { RequestIdempotency } from './request-idempotency.js';

const Ref = {
  accountId: Type.String({ minLength: 1, maxLength: 64 }),
  // Printable ASCII, as edge accepts in the header.
  key: Type.String({ minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' }),
  requestHash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
};

const ClaimSchema = Type.Object(
  { ...Ref, leaseMs: Type.Integer({ minimum: 1, maximum: 86_400_000 }) },
  { additionalProperties: false },
);
const RefSchema = Type.Object(Ref, { additionalProperties: false });
const CompleteSchema = Type.Object(
  {
    ...Ref,
    response: Type.Object(
      {
        status: Type.Integer({ minimum: 200, maximum: 599 }),
        contentType: Type.String({ minLength: 1, maxLength: 256 }),
        body: Type.String(),
        encoding: Type.Union([Type.Literal('utf8'), Type.Literal('base64')]),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const validateClaim = createBodyValidator<Static<typeof ClaimSchema>>(ClaimSchema);
const validateRef = createBodyValidator<Static<typeof RefSchema>>(RefSchema);
const validateComplete = createBodyValidator<Static<typeof CompleteSchema>>(CompleteSchema);

/**
 * `/internal/v1/idempotency/*`: the shared Idempotency-Key store of edge's public POST routes
 * (see request-idempotency.ts). Stored responses may be large (an embeddings answer), hence the
 * router's own body limit.
 */
export function idempotencyRoutes(store: RequestIdempotency, bodyLimitBytes: number): Router {
  const router = express.Router();
  router.use(...jsonBodyParser({ limitBytes: bodyLimitBytes }));
  router.post('/claim', async (req, res) => {
    const { leaseMs, ...ref } = validateClaim(req.body);
    res.json(await store.claim(ref, leaseMs));
  });
  router.post('/complete', async (req, res) => {
    const { response, ...ref } = validateComplete(req.body);
    await store.complete(ref, response);
    res.status(204).end();
  });
  router.post('/release', async (req, res) => {
    await store.release(validateRef(req.body));
    res.status(204).end();
  });
  return router;
}
