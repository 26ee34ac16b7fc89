/**
 * Stored Responses state over billing's internal API: edge's calls only, for the account edge
 * authenticated and the reader it names (contract: packages/contracts/src/responses-state-api.ts).
 * Mounted under `/internal/v1` ahead of the internal API's own body parser: a stored response
 * may be up to `LIMITS.storedResponseMaxBytes`, far above that parser's limit.
 */
import express, { type Request, type Router } from 'express';
import { Type } from '@sinclair/typebox';
import {
  createBodyValidator,
  FinishResponseRequestSchema,
  LIMITS,
  ResponseContextRequestSchema,
  SaveResponseRequestSchema,
  type DeletedResponse,
  type FinishedResponse,
  type FinishResponseRequest,
  type ResponseContext,
  type ResponseContextRequest,
  type ResponseRecord,
  type SaveResponseRequest,
} from '@gateway/contracts';
import { allowInternalCallers, jsonBodyParser } from '@gateway/runtime';
import type { Reader } from './response-repository.js';
import type { StoredResponses } from './stored-responses.js';

const validateSave = createBodyValidator<SaveResponseRequest>(SaveResponseRequestSchema);
const validateContext = createBodyValidator<ResponseContextRequest>(ResponseContextRequestSchema);
const validateFinish = createBodyValidator<FinishResponseRequest>(FinishResponseRequestSchema);
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

const accountOf = (req: Request) => String(req.params.accountId);
const responseOf = (req: Request) => String(req.params.responseId);

/** Mounted under `/internal/v1`. */
export function responseRoutes(responses: StoredResponses): Router {
  const router = express.Router();
  const EDGE = allowInternalCallers('edge');
  const saveBody = jsonBodyParser({ limitBytes: SAVE_BODY_LIMIT_BYTES });
  const contextBody = jsonBodyParser({ limitBytes: CONTEXT_BODY_LIMIT_BYTES });
  router.post('/accounts/:accountId/responses/context', EDGE, ...contextBody, async (req, res) => {
    const context = await responses.context(accountOf(req), validateContext(req.body));
    res.json(context satisfies ResponseContext);
  });
  router.put('/accounts/:accountId/responses/:responseId', EDGE, ...saveBody, async (req, res) => {
    await responses.save(accountOf(req), responseOf(req), validateSave(req.body));
    res.status(204).end();
  });
  router.post(
    '/accounts/:accountId/responses/:responseId/finish',
    EDGE,
    ...saveBody,
    async (req, res) => {
      const body = validateFinish(req.body);
      const finished = await responses.finish(accountOf(req), responseOf(req), body);
      res.json(finished satisfies FinishedResponse);
    },
  );
  router.get('/accounts/:accountId/responses/:responseId', EDGE, async (req, res) => {
    const record = await responses.get(accountOf(req), responseOf(req), readerOf(req));
    res.json(record satisfies ResponseRecord);
  });
  router.delete('/accounts/:accountId/responses/:responseId', EDGE, async (req, res) => {
    const deleted = await responses.delete(accountOf(req), responseOf(req), readerOf(req));
    res.json(deleted satisfies DeletedResponse);
  });
  return router;
}
