/*
 * The Responses API routes. `POST /v1/responses` is an inference route (billing authenticates it
 * with its admission); reading and deleting stored responses authenticate first and cost
 * nothing. Stored state is the caller's only (conversation.ts's readerOf): another account's, or
 * another token's, id is the same 404 as an unknown one.
 */
import express, { type Request, type Response, type Router } from 'express';
import {
  GatewayError,
  LIMITS,
  RESPONSE_ID_PATTERN,
  type ResponseItemRecord,
} from '@gateway/contracts';

const RESPONSE_ID = new RegExp(RESPONSE_ID_PATTERN);
import type { EdgeDeps } from '../deps.js';
import { credentialOf, credentialRequired } from '../http/auth.js';
import { callerOf, jsonBody } from '../http/context.js';
import { methodNotAllowed } from '../http/errors.js';
import { cancelResponse } from './background-response.js';
import { readerOf } from './conversation.js';
import { createResponseHandler } from './create-response.js';
import { invalidInput } from './input-items.js';

/** `POST /v1/responses`, mounted with the other inference routes. */
export function createResponsesRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const credential = credentialRequired(deps.authFailures);
  router.post(
    '/responses',
    credential,
    ...jsonBody(deps.limits.jsonBodyBytes),
    createResponseHandler(deps),
  );
  router.all('/responses', credential, methodNotAllowed(['POST']));
  return router;
}

/** Stored responses: mounted after authentication. */
export function storedResponsesRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const who = (req: Request, res: Response) => {
    // A malformed id cannot name a stored response: the same 404 as an unknown one.
    if (!RESPONSE_ID.test(String(req.params.responseId))) {
      throw new GatewayError('response_not_found', 'No stored response with this id');
    }
    const caller = callerOf(res);
    return { accountId: caller.accountId, reader: readerOf(caller, credentialOf(req)) };
  };
  router.get('/responses/:responseId', async (req, res) => {
    const { accountId, reader } = who(req, res);
    const record = await deps.billing.responseRecord(accountId, req.params.responseId!, reader);
    // Stored `queued` when it was accepted; from then until its result it reads `in_progress`
    // (edge does not write each step: the job may still wait in the queue).
    res.json(record.inProgress ? { ...record.response, status: 'in_progress' } : record.response);
  });
  router.delete('/responses/:responseId', async (req, res) => {
    const { accountId, reader } = who(req, res);
    const deleted = await deps.billing.deleteResponse(accountId, req.params.responseId!, reader);
    res.json({ id: deleted.id, object: 'response', deleted: true });
  });
  router.all('/responses/:responseId', methodNotAllowed(['GET', 'DELETE']));
  router.post('/responses/:responseId/cancel', async (req, res) => {
    res.json(await cancelResponse(deps, who(req, res), req.params.responseId!));
  });
  router.all('/responses/:responseId/cancel', methodNotAllowed(['POST']));
  router.get('/responses/:responseId/input_items', async (req, res) => {
    const { accountId, reader } = who(req, res);
    const page = pageOf(req.query);
    const record = await deps.billing.responseRecord(accountId, req.params.responseId!, reader);
    res.json(listPage(record.inputItems, page));
  });
  router.all('/responses/:responseId/input_items', methodNotAllowed(['GET']));
  return router;
}

interface Page {
  limit: number;
  order: 'asc' | 'desc';
  after: string | undefined;
}

/** The reference's paging: `limit` 1–100 (20), `order` `desc` by default, `after` an item id. */
function pageOf(query: Request['query']): Page {
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIMITS.responseInputItemsPageMax) {
    throw invalidInput(
      `limit must be an integer from 1 to ${LIMITS.responseInputItemsPageMax}`,
      'limit',
    );
  }
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalidInput('order must be asc or desc', 'order');
  const after = query.after;
  if (after !== undefined && typeof after !== 'string')
    throw invalidInput('after must be an item id', 'after');
  return { limit, order, after };
}

function listPage(items: ResponseItemRecord[], page: Page) {
  const ordered = page.order === 'asc' ? items : [...items].reverse();
  const start =
    page.after === undefined ? 0 : ordered.findIndex((item) => item.id === page.after) + 1;
  const data = ordered.slice(start, start + page.limit);
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: start + page.limit < ordered.length,
  };
}
