import express, { type Router } from 'express';
import { GatewayError } from '@gateway/contracts';
import { allowInternalCallers } from '@gateway/runtime';
import type { Identity } from '../identity/index.js';
import type { LedgerService } from '../ledger/index.js';
import type { RequestIdempotency } from './request-idempotency.js';
import { MODEL_KINDS, MODEL_PROVIDERS } from '../identity/index.js';
import {
  balanceToJson,
  optionalEnumList,
  optionalShortString,
  principalFromWire,
  requiredCount,
  requiredString,
  toWire,
} from './wire.js';

export interface BillingServices {
  identity: Identity;
  ledger: LedgerService;
  /** Edge's Idempotency-Key store; built over the identity store when omitted. */
  requestIdempotency?: RequestIdempotency;
}

// Least privilege: edge authenticates, admits and manages tokens; the worker reads the catalog
// and finishes holds; only the worker settles (edge voids a hold it could not publish).
const EDGE = allowInternalCallers('edge');
const WORKER = allowInternalCallers('worker');
const EDGE_OR_WORKER = allowInternalCallers('edge', 'worker');

/**
 * What edge and the worker call on every request. Bodies and answers are documented in
 * services/billing/README.md ("Internal API").
 */
export function internalRoutes({ identity, ledger }: BillingServices): Router {
  const router = express.Router();

  router.post('/authenticate', EDGE, async (req, res) => {
    const authorization = (req.body as { authorization?: unknown })?.authorization;
    const principal = await identity.authenticator.authenticate(
      typeof authorization === 'string' ? authorization : undefined,
    );
    res.json({ principal: toWire(principal) });
  });

  // Routes that place no hold still count against the account's rate limit.
  router.post('/rate-limit', EDGE, async (req, res) => {
    const principal = principalFromWire((req.body as { principal?: unknown })?.principal);
    const decision = await identity.rateLimiter.enforce(
      principal.accountId,
      principal.rateLimitPerMinute,
    );
    res.json({ rateLimit: decision });
  });

  router.post('/admit', EDGE, async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const estimate = (body.estimate ?? {}) as Record<string, unknown>;
    const admission = await identity.admitter.admit(
      {
        principal: principalFromWire(body.principal),
        model: requiredString(body, 'model'),
        estimate: {
          inputTokens: requiredCount(estimate, 'inputTokens'),
          maxOutputTokens:
            typeof estimate.maxOutputTokens === 'number' ? estimate.maxOutputTokens : null,
          choices: typeof estimate.choices === 'number' ? estimate.choices : 1,
        },
        priority: body.priority === true,
        ...optionalEnumList(body, 'providers', MODEL_PROVIDERS),
        ...optionalEnumList(body, 'kinds', MODEL_KINDS),
        ...optionalShortString(body, 'nodeUnsupportedParameter'),
      },
      { placeHold: (tx, input) => ledger.placeHold(tx, input) },
    );
    res.json(toWire(admission));
  });

  router.post('/holds/:holdId/settle', WORKER, async (req, res) => {
    const result = await ledger.settleHold(param(req.params.holdId), {
      inputTokens: requiredCount(req.body, 'inputTokens'),
      outputTokens: requiredCount(req.body, 'outputTokens'),
    });
    res.json(toWire(result));
  });

  router.post('/holds/:holdId/void', EDGE_OR_WORKER, async (req, res) => {
    res.json(toWire(await ledger.voidHold(param(req.params.holdId))));
  });

  router.get('/accounts/:accountId/balance', EDGE, async (req, res) => {
    await identity.accounts.get(param(req.params.accountId));
    res.json(balanceToJson(await ledger.getBalance(param(req.params.accountId))));
  });

  router.post('/accounts/:accountId/scoped-tokens', EDGE, async (req, res) => {
    res.status(201).json(await identity.scopedTokens.create(param(req.params.accountId), req.body));
  });

  router.post('/accounts/:accountId/scoped-tokens/inspect', EDGE, async (req, res) => {
    const token = requiredString(req.body, 'token');
    res.json(toWire(await identity.scopedTokens.inspect(param(req.params.accountId), token)));
  });

  router.post('/accounts/:accountId/scoped-tokens/revoke', EDGE, async (req, res) => {
    const token = requiredString(req.body, 'token');
    res.json(
      toWire(await identity.scopedTokens.revoke(token, { accountId: param(req.params.accountId) })),
    );
  });

  router.get('/models', EDGE_OR_WORKER, async (_req, res) => {
    res.json(toWire({ models: await identity.catalog.list() }));
  });

  router.get('/models/*modelId', EDGE_OR_WORKER, async (req, res) => {
    res.json(toWire(await identity.catalog.get(modelIdParam(req.params.modelId))));
  });

  return router;
}

/** Express 5 wildcards yield the path segments; model ids themselves contain '/'. */
export function modelIdParam(segments: unknown): string {
  const id = Array.isArray(segments) ? segments.join('/') : String(segments ?? '');
  if (id.length === 0) throw new GatewayError('model_not_found', 'Model id is missing');
  return id;
}

/** A named route parameter (Express types them loosely once middleware precedes the handler). */
function param(value: string | string[] | undefined): string {
  return typeof value === 'string' ? value : '';
}
