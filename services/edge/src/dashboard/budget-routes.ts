import express, { type Request, type Router } from 'express';
import type { BudgetOwnerRef } from '@gateway/billing-client';
import {
  BudgetPutRequestSchema,
  createBodyValidator,
  type BudgetList,
  type BudgetPutRequest,
  type BudgetView,
} from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { accountIdOf } from './operator-routes.js';
import { ownerAccountId } from './owner-routes.js';

/*
 * Budgets in the dashboard, through the same billing client methods as the
 * operator API (`/admin/v1/accounts/{id}/…/budget`), so the same contract validates both.
 */

const validatePut = createBodyValidator<BudgetPutRequest>(BudgetPutRequestSchema);

const keyOf = (req: Request): BudgetOwnerRef => ({ apiKey: String(req.params.name) });
const tokenOf = (req: Request): BudgetOwnerRef => ({ scopedTokenId: String(req.params.tokenId) });

/**
 * Owners (after `ownerOnly`): the account's budgets, and their own keys' budgets set or
 * removed. The account is the session's, so another account's key is an unknown key (404).
 * Token budgets are read here and set by operators (a token's holder gets its own cap from the
 * token's `spending_limit` claim).
 */
export function ownerBudgetRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const { operator } = deps.billing;
  router.get('/budgets', async (_req, res) => {
    const list: BudgetList = await operator.listBudgets(ownerAccountId(res));
    res.json(list);
  });
  router.put('/api-keys/:name/budget', ...jsonBody(deps.limits.jsonBodyBytes), async (req, res) => {
    const body = validatePut(req.body);
    const view: BudgetView = await operator.putBudget(ownerAccountId(res), keyOf(req), body);
    res.json(view);
  });
  router.delete('/api-keys/:name/budget', async (req, res) => {
    await operator.removeBudget(ownerAccountId(res), keyOf(req));
    res.status(204).end();
  });
  return router;
}

/** Operators (under `/operator`, after `operatorsOnly`: finance reads only). */
export function operatorBudgetRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  const { operator } = deps.billing;
  const body = jsonBody(deps.limits.jsonBodyBytes);
  router.get('/accounts/:id/budgets', async (req, res) => {
    const list: BudgetList = await operator.listBudgets(accountIdOf(req));
    res.json(list);
  });
  const owners = [
    ['/accounts/:id/api-keys/:name/budget', keyOf],
    ['/accounts/:id/scoped-tokens/:tokenId/budget', tokenOf],
  ] as const;
  for (const [path, ownerOf] of owners) {
    router.put(path, ...body, async (req, res) => {
      const input = validatePut(req.body);
      const view: BudgetView = await operator.putBudget(accountIdOf(req), ownerOf(req), input);
      res.json(view);
    });
    router.delete(path, async (req, res) => {
      await operator.removeBudget(accountIdOf(req), ownerOf(req));
      res.status(204).end();
    });
  }
  return router;
}
