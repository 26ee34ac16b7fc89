/**
 * Stored Responses state over billing's internal API: edge's calls only, for the account edge
 * authenticated and the reader it names (contract: packages/contracts/src/responses-state-api.ts).
 * Mounted under `/internal/v1` ahead of the internal API's own body parser: a stored response
 * may be up to `LIMITS.storedResponseMaxBytes`, far above that parser's limit.
 */
import express, { type Request, type Router } from 'express';
import { Type } from '@sinclair/typebox';
import {
  BILLING_ROUTES as R,
  createBodyValidator,
  LIMITS,
  ResponseContextRequestSchema,
} from '@gateway/contracts';
import { jsonBodyParser } from '@gateway/runtime';
import { serveBillingRoute } from '../http/billing-route.js';
import type { Reader } from './response-repository.js';
import type { StoredResponses } from './stored-responses.js';

// `?reader=`: the contract's digest, given at most once; absent is an API key.
const validateReader = createBodyValidator<{ reader?: Reader }>(
  Type.Object(
    { reader: Type.Optional(ResponseContextRequestSchema.properties.reader) },
    { additionalProperties: false },
  ),
);

/**
 * A save's body: its content's own limit is checked on the content (400 naming it), so the
 * parser's limit is only a backstop, with room for JSON written less compactly than ours.
 */
const SAVE_BODY_LIMIT_BYTES = 2 * LIMITS.storedResponseMaxBytes;
/** A context request: a digest, an id and at most 256 item ids. */
const CONTEXT_BODY_LIMIT_BYTES = 64 * 1024;

const readerOf = (req: Request): Reader => {
  const { reader } = req.query;
  return validateReader(reader === undefined ? {} : { reader }).reader ?? null;
};

/** Mounted under `/internal/v1`: `BILLING_ROUTES`' stored-response routes (edge only). */
export function responseRoutes(responses: StoredResponses): Router {
  const router = express.Router();
  const saveBody = jsonBodyParser({ limitBytes: SAVE_BODY_LIMIT_BYTES });
  const contextBody = jsonBodyParser({ limitBytes: CONTEXT_BODY_LIMIT_BYTES });
  serveBillingRoute(
    router,
    R.responseContext,
    ({ params, body }) => responses.context(params.accountId, body),
    contextBody,
  );
  serveBillingRoute(
    router,
    R.saveResponse,
    async ({ params, body }) => {
      await responses.save(params.accountId, params.responseId, body);
    },
    saveBody,
  );
  serveBillingRoute(
    router,
    R.finishResponse,
    ({ params, body }) => responses.finish(params.accountId, params.responseId, body),
    saveBody,
  );
  serveBillingRoute(router, R.responseRecord, ({ params, req }) =>
    responses.get(params.accountId, params.responseId, readerOf(req)),
  );
  serveBillingRoute(router, R.deleteResponse, ({ params, req }) =>
    responses.delete(params.accountId, params.responseId, readerOf(req)),
  );
  return router;
}
