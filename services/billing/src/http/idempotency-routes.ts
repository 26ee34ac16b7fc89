import express, { type Router } from 'express';
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import {
  createBodyValidator,
  HoldIdSchema,
  IdempotencyRefSchema,
  StoredResponseSchema,
  type IdempotencyClaim,
  type IdempotencyRef,
} from '@gateway/contracts';
import { jsonBodyParser } from '@gateway/runtime';
import type { RequestIdempotency } from './request-idempotency.js';

// The bodies are the contract's key, with the claim's lease or the answer to store.
const closed = { additionalProperties: false } as const;
const ClaimSchema = Type.Object(
  {
    ...IdempotencyRefSchema.properties,
    leaseMs: Type.Integer({ minimum: 1, maximum: 86_400_000 }),
    holdId: Type.Optional(HoldIdSchema),
  },
  closed,
);
const RefSchema = Type.Object(IdempotencyRefSchema.properties, closed);
const CompleteSchema = Type.Object(
  { ...IdempotencyRefSchema.properties, response: StoredResponseSchema },
  closed,
);

const validateClaim = createBodyValidator<Static<typeof ClaimSchema>>(ClaimSchema);
const validateRef = createBodyValidator<IdempotencyRef>(RefSchema);
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
    const { leaseMs, holdId, ...ref } = validateClaim(req.body);
    const answer: IdempotencyClaim = await store.claim(ref, leaseMs, holdId);
    res.json(answer);
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
