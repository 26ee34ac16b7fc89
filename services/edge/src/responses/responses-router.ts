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
  PUBLIC_ROUTES,
  RESPONSE_ID_PATTERN,
  type ResponseItemRecord,
} from '@gateway/contracts';

const RESPONSE_ID = new RegExp(RESPONSE_ID_PATTERN);
import type { EdgeDeps } from '../deps.js';
import { credentialOf, credentialRequired } from '../http/auth.js';
import { callerOf, jsonBody } from '../http/context.js';
import { mountPublicRoute, refuseOtherMethods } from '../http/public-route.js';
import { cancelResponse } from './background-response.js';
import { readerOf } from './conversation.js';
import { createResponseHandler } from './create-response.js';
import { invalidInput } from './input-items.js';

/** `POST /v1/responses`, mounted with the other inference routes. */
export function createResponsesRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const credential = credentialRequired(deps.authFailures);
  const route = PUBLIC_ROUTES.createResponse;
  const body = jsonBody(deps.limits.jsonBodyBytes);
  mountPublicRoute(router, route, [credential], ...body, createResponseHandler(deps));
  refuseOtherMethods(router, route.path, [credential]);
  return router;
}

/** Stored responses: mounted after authentication. */
export function storedResponsesRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  /** The response the path names, and who reads it. */
  const who = (req: Request, res: Response) => {
    const id = String(req.params.response_id);
    // A malformed id cannot name a stored response: the same 404 as an unknown one.
    if (!RESPONSE_ID.test(id)) {
      throw new GatewayError('response_not_found', 'No stored response with this id');
    }
    const caller = callerOf(res);
    return { id, accountId: caller.accountId, reader: readerOf(caller, credentialOf(req)) };
  };
  const { getResponse, deleteResponse, cancelResponse: cancel, responseInputItems } = PUBLIC_ROUTES;
  mountPublicRoute(router, getResponse, [], async (req, res) => {
    const { id, accountId, reader } = who(req, res);
    const record = await deps.billing.responseRecord(accountId, id, reader);
    // Stored `queued` when it was accepted; from then until its result it reads `in_progress`
    // (edge does not write each step: the job may still wait in the queue).
    res.json(record.inProgress ? { ...record.response, status: 'in_progress' } : record.response);
  });
  mountPublicRoute(router, deleteResponse, [], async (req, res) => {
    const { id, accountId, reader } = who(req, res);
    const deleted = await deps.billing.deleteResponse(accountId, id, reader);
    res.json({ id: deleted.id, object: 'response', deleted: true });
  });
  mountPublicRoute(router, cancel, [], async (req, res) => {
    const { id, ...owner } = who(req, res);
    res.json(await cancelResponse(deps, owner, id));
  });
  mountPublicRoute(router, responseInputItems, [], async (req, res) => {
    const { id, accountId, reader } = who(req, res);
    const page = pageOf(req.query);
    const record = await deps.billing.responseRecord(accountId, id, reader);
    res.json(listPage(record.inputItems, page));
  });
  for (const route of [getResponse, cancel, responseInputItems]) {
    refuseOtherMethods(router, route.path);
  }
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
