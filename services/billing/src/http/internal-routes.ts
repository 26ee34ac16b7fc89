/**
 * Billing's internal API: the routes edge and the worker call on every request (authenticate,
 * admit, settle, void, refund, publish marks, catalog, balance, scoped tokens), served from
 * their contract (`BILLING_ROUTES`, packages/contracts/src/billing-routes.ts), and the answers
 * they send, built with the contract types (packages/contracts/src/billing-api.ts).
 */
import express, { type Request, type Router } from 'express';
import { requestLogger, withRequestId } from '@gateway/runtime';
import type { Budgets } from '../budgets/budgets.js';
import type { AlertSettings } from '../alerts/alert-settings.js';
import type { Receipts } from '../receipts/receipts.js';
import type { StoredResponses } from '../responses/stored-responses.js';
import type { PeriodReports } from '../reports/period-reports.js';
import type { ClosedPeriods } from '../reports/closed-periods.js';
import type { ModelRecord, Identity } from '../identity/index.js';
import { admissionToWire, admitRequestOf, callerOf } from '@gateway/ledger-calls';
import { batchItemAnswer, errorItemAnswer } from './error-answers.js';
import { rateSubjectOf } from '../identity/index.js';
import type { LedgerService, RefundResult, SettleResult, VoidResult } from '../ledger/index.js';
import type { RequestIdempotency } from './request-idempotency.js';
import type { Dashboard } from '../dashboard/index.js';
import type { UsageService } from '../usage/index.js';
import type { NodeHealthService } from '../nodes/index.js';
import {
  BILLING_ROUTES as R,
  GatewayError,
  microDzdToWire,
  type BatchItemAnswer,
  type CatalogEntry,
  type RefundResponse,
  type SettleResponse,
  type VoidResponse,
} from '@gateway/contracts';
import { balanceToJson } from './wire.js';
import { serveBillingRoute } from './billing-route.js';

/** Every service billing's API serves, built by `service.ts` (tests: billing-services.suite.ts). */
export interface BillingServices {
  identity: Identity;
  ledger: LedgerService;
  /** Usage records. */
  usage: UsageService;
  /** Edge's Idempotency-Key store. */
  requestIdempotency: RequestIdempotency;
  /** Dashboard users and sessions. */
  dashboard: Dashboard;
  /** Node health reports. */
  nodeHealth: NodeHealthService;
  /** Budgets per API key and scoped token. */
  budgets: Budgets;
  /** Account alert settings. */
  alerts: AlertSettings;
  /** Receipts: one request traced to its money. */
  receipts: Receipts;
  /** Stored Responses API state (`/v1/responses`), edge's alone. */
  responses: StoredResponses;
  /** Finance's period report (the month-end close). */
  reports: PeriodReports;
  /** Closed periods of the books. */
  periods: ClosedPeriods;
}

/**
 * An absent body is an empty one: older callers void without a body (the usage record's
 * outcome and timings are optional).
 */
const noBodyIsEmpty: express.RequestHandler = (req, _res, next) => {
  req.body ??= {};
  next();
};

/**
 * What edge and the worker call on every request, served from the contract (`BILLING_ROUTES`:
 * bodies validated by its schemas, answers of its types, each route behind the credentials its
 * `caller` names). Least privilege: edge authenticates, admits and manages tokens; the worker
 * reads the catalog and finishes holds; only the worker settles (edge voids a hold it could not
 * publish). Bodies and answers are documented in services/billing/README.md ("Internal API").
 */
export function internalRoutes({ identity, ledger }: BillingServices): Router {
  const router = express.Router();

  // A route that places no hold: who is calling, and the request counted against the limit.
  serveBillingRoute(router, R.authenticate, async ({ body }) => {
    const principal = await identity.authenticator.authenticate(body.authorization);
    const subject = rateSubjectOf(principal);
    const rateLimit =
      body.count === false
        ? await identity.rateLimiter.peek(subject)
        : await identity.rateLimiter.enforce(subject);
    identity.lastUsed.touch(principal.accountId, principal.apiKeyName);
    return { caller: callerOf(principal), rateLimit };
  });

  // Everything before a job, from the credential itself: one call, idempotent on the hold id.
  serveBillingRoute(router, R.admit, async ({ body }) => {
    // One PostgreSQL round trip: credential, limits, model, budget, balance and the hold.
    const { principal, admission } = await identity.admission.admit(
      body.authorization,
      admitRequestOf(body),
    );
    identity.lastUsed.touch(principal.accountId, principal.apiKeyName);
    return admissionToWire(principal, admission);
  });

  // The admissions that queued in one edge while its previous call ran: one transaction, each
  // item answered as `/admissions` would have answered it.
  serveBillingRoute(router, R.admitBatch, async ({ body: { items }, req }) => {
    const results = await identity.admission.admitMany(
      items.map((body) => ({ authorization: body.authorization, request: admitRequestOf(body) })),
    );
    return {
      answers: results.map((result) => {
        if (!result.ok) return errorItemAnswer(result.error, requestLogger(req));
        const { principal, admission } = result.value;
        identity.lastUsed.touch(principal.accountId, principal.apiKeyName);
        return { status: 200, body: admissionToWire(principal, admission) };
      }),
    };
  });

  // The worker's settlements, batched like admissions; billing groups them into statements.
  serveBillingRoute(router, R.settleBatch, async ({ body: { items }, req }) => ({
    answers: await answerEach(req, items, async ({ holdId, usage }) =>
      settleToWire(await ledger.settleHold(holdId, usage)),
    ),
  }));

  serveBillingRoute(router, R.voidBatch, async ({ body: { items }, req }) => ({
    answers: await answerEach(req, items, async ({ holdId, usage }) =>
      voidToWire(await ledger.voidHold(holdId, usage)),
    ),
  }));

  serveBillingRoute(router, R.settle, async ({ params, body }) =>
    settleToWire(await ledger.settleHold(params.holdId, body)),
  );

  // Edge confirms jobs reached the broker (batched): each hold then lives until its job's end.
  serveBillingRoute(router, R.publishMarks, async ({ body }) => {
    const marks = body.holds.map((mark) => ({
      holdId: mark.holdId,
      expiresAt: publishedHoldExpiry(mark.expiresAtMs),
    }));
    return { published: [...(await ledger.markHoldsPublished(marks))] };
  });

  serveBillingRoute(
    router,
    R.void,
    async ({ params, body }) => voidToWire(await ledger.voidHold(params.holdId, body)),
    [noBodyIsEmpty],
  );

  // The answer of a settled hold reached nobody (its reply was unroutable, or edge gave up
  // waiting): the charge is given back.
  serveBillingRoute(router, R.refund, async ({ params }) =>
    refundToWire(await ledger.refundHold(params.holdId)),
  );

  // Edge handed the answer to its request but lost the reply's acknowledgement (ADR 0068).
  serveBillingRoute(router, R.markDelivered, async ({ params: { holdId } }) => ({
    holdId,
    ...(await ledger.markAnswerDelivered(holdId)),
  }));

  // A redelivered job asks whether its hold is still pending before it calls a model again.
  serveBillingRoute(router, R.holdStatus, async ({ params }) => {
    const hold = await ledger.getHold(params.holdId);
    if (!hold) throw new GatewayError('resource_not_found', 'No such hold');
    return { holdId: hold.id, status: hold.status };
  });

  serveBillingRoute(router, R.balance, async ({ params: { accountId } }) => {
    await identity.accounts.get(accountId);
    return balanceToJson(await ledger.getBalance(accountId));
  });

  // The body is checked by the contract, then again by the service (an expiry within a year).
  serveBillingRoute(router, R.createScopedToken, ({ params, body }) =>
    identity.scopedTokens.create(params.accountId, body),
  );

  serveBillingRoute(router, R.inspectScopedToken, ({ params, body }) =>
    identity.scopedTokens.inspect(params.accountId, body.token),
  );

  serveBillingRoute(router, R.revokeScopedToken, ({ params, body }) =>
    identity.scopedTokens.revoke(body.token, { accountId: params.accountId }),
  );

  serveBillingRoute(router, R.listModels, async () => ({
    models: (await identity.catalog.list()).map(catalogEntryToWire),
  }));

  serveBillingRoute(router, R.getModel, async ({ params }) =>
    catalogEntryToWire(await identity.catalog.get(modelIdParam(params.modelId))),
  );

  return router;
}

/** Each item's work under its own request's id, answered as its single route would answer. */
function answerEach<T extends { requestId?: string }>(
  req: Request,
  items: readonly T[],
  work: (item: T) => Promise<unknown>,
): Promise<BatchItemAnswer[]> {
  const log = requestLogger(req);
  return Promise.all(
    items.map((item) =>
      withRequestId(item.requestId, () => batchItemAnswer(log, () => work(item))),
    ),
  );
}

/** The admission as billing's domain takes it, from the contract's request. */
/** Express 5 wildcards yield the path segments; model ids themselves contain '/'. */
export function modelIdParam(segments: unknown): string {
  const id = Array.isArray(segments) ? segments.join('/') : String(segments ?? '');
  if (id.length === 0) throw new GatewayError('model_not_found', 'Model id is missing');
  return id;
}

/** A published job's hold never needs to outlive a week (the longest deadline edge accepts). */
const PUBLISHED_HOLD_MAX_MS = 7 * 86_400_000;

function publishedHoldExpiry(expiresAtMs: number): Date {
  if (!Number.isSafeInteger(expiresAtMs) || expiresAtMs > Date.now() + PUBLISHED_HOLD_MAX_MS) {
    throw new GatewayError('invalid_request_body', 'expiresAtMs must be a time within 7 days', {
      param: 'expiresAtMs',
    });
  }
  return new Date(expiresAtMs);
}

// --- the answers (contract types; µDZD as strings, dates as ISO 8601)

/** Who is calling, as edge needs it (never the token's digest or limits). */
/*
 * The hold answers carry what the contract names, nothing more: the journal transaction and the
 * posted credits and debits stay in billing.
 */

export function settleToWire(result: SettleResult): SettleResponse {
  const { balance } = result;
  return {
    holdId: result.holdId,
    costMicroDzd: microDzdToWire(result.costMicroDzd),
    releasedMicroDzd: microDzdToWire(result.releasedMicroDzd),
    balance: {
      balanceMicroDzd: microDzdToWire(balance.balanceMicroDzd),
      pendingMicroDzd: microDzdToWire(balance.pendingMicroDzd),
      availableMicroDzd: microDzdToWire(balance.availableMicroDzd),
    },
    replayed: result.replayed,
  };
}

export function voidToWire(result: VoidResult): VoidResponse {
  return { holdId: result.holdId, status: result.status, replayed: result.replayed };
}

export function refundToWire(result: RefundResult): RefundResponse {
  return {
    holdId: result.holdId,
    status: result.status,
    refundedMicroDzd: microDzdToWire(result.refundedMicroDzd),
    replayed: result.replayed,
  };
}

/** A catalog entry as edge and the worker read it: prices and media rules stay in billing. */
export function catalogEntryToWire(model: ModelRecord): CatalogEntry {
  return {
    id: model.id,
    kind: model.kind,
    provider: model.provider,
    protocol: model.protocol,
    upstreamModel: model.upstreamModel,
    maxOutputTokens: model.maxOutputTokens,
    nodes: model.nodes.map((node) =>
      node.weight === undefined ? { url: node.url } : { url: node.url, weight: node.weight },
    ),
    updatedAt: model.updatedAt.toISOString(),
  };
}
