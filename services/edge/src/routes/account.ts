import express, { type Router } from 'express';
import { GatewayError, PUBLIC_ROUTES } from '@gateway/contracts';
import type { Caller, CatalogEntry } from '@gateway/contracts';
import type { EdgeDeps } from '../deps.js';
import { callerOf } from '../http/context.js';
import { mountPublicRoute, refuseOtherMethods } from '../http/public-route.js';
import { modelFromPath } from './native-inference.js';

/** `GET /v1/user/balance` (decisions §3 shape) and the model list in the OpenAI shape. */
export function accountRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const { billing } = deps;

  const { balance, models, model } = PUBLIC_ROUTES;
  mountPublicRoute(router, balance, [], async (_req, res) => {
    res.json(await billing.balance(callerOf(res).accountId));
  });
  mountPublicRoute(router, models, [], async (_req, res) => {
    const visible = (await billing.listModels()).filter(visibleTo(callerOf(res)));
    res.json({ object: 'list', data: visible.map(openAiModel) });
  });
  mountPublicRoute(router, model, [], async (req, res) => {
    const model = await billing.getModel(modelFromPath(req));
    if (!visibleTo(callerOf(res))(model)) {
      throw new GatewayError('model_not_found', `Model '${model.id}' not found`, {
        param: 'model',
      });
    }
    res.json(openAiModel(model));
  });
  for (const route of [balance, models, model]) refuseOtherMethods(router, route.path);
  return router;
}

/** A scoped token restricted to some models sees only those. */
const visibleTo = (caller: Caller) => (model: CatalogEntry) => {
  const allowed = caller.tokenModels;
  return allowed === null || allowed.includes(model.id);
};

/** `owned_by`: the organisation part of the id (`meta-llama/...`), else the gateway. */
function openAiModel(model: CatalogEntry) {
  const slash = model.id.indexOf('/');
  return {
    id: model.id,
    object: 'model',
    created: Math.floor(Date.parse(model.updatedAt) / 1000),
    owned_by: slash > 0 ? model.id.slice(0, slash) : 'gateway',
  };
}
