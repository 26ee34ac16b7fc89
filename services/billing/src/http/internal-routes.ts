/**
 * Billing's internal API: the routes edge and the worker call on every request (authenticate,
 * admit, settle, void, refund, publish marks, catalog, balance, scoped tokens) and the answers
 * they send, built with the contract types (packages/contracts/src/billing-api.ts).
 */
import express, { type Request, type Router } from 'express';
import { allowInternalCallers, requestLogger, withRequestId } from '@gateway/runtime';
import type { Budgets } from '../budgets/budgets.js';
import type { AlertSettings } from '../alerts/alert-settings.js';
import type { Receipts } from '../receipts/receipts.js';
import type { StoredResponses } from '../responses/stored-responses.js';
import type { PeriodReports } from '../reports/period-reports.js';
import type { ClosedPeriods } from '../reports/closed-periods.js';
import type {
  Admission,
  ModelRecord,
  CredentialAdmitRequest,
  Identity,
  Principal,
} from '../identity/index.js';
import { batchItemAnswer, errorItemAnswer } from './error-answers.js';
import { rateSubjectOf } from '../identity/index.js';
import type { LedgerService, RefundResult, SettleResult, VoidResult } from '../ledger/index.js';
import type { RequestIdempotency } from './request-idempotency.js';
import type { Dashboard } from '../dashboard/index.js';
import type { UsageService } from '../usage/index.js';
import type { NodeHealthService } from '../nodes/index.js';
import {
  AdmissionBatchRequestSchema,
  AdmissionRequestSchema,
  SettleBatchRequestSchema,
  VoidBatchRequestSchema,
  AuthenticateRequestSchema,
  PublishMarksRequestSchema,
  SettleRequestSchema,
  VoidRequestSchema,
  createBodyValidator,
  GatewayError,
  microDzdToWire,
  type AdmissionBatchRequest,
  type AdmissionRequest,
  type BatchAnswer,
  type BatchItemAnswer,
  type SettleBatchRequest,
  type VoidBatchRequest,
  type AdmissionResponse,
  type AuthenticateRequest,
  type AuthenticateResponse,
  type Caller,
  type CatalogEntry,
  type CatalogListResponse,
  type HoldStatusResponse,
  type PublishMarksRequest,
  type PublishMarksResponse,
  type AnswerDeliveredResponse,
  type RefundResponse,
  type SettleRequest,
  type SettleResponse,
  type VoidRequest,
  type VoidResponse,
} from '@gateway/contracts';
import { balanceToJson, requiredString } from './wire.js';

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

// Requests are validated against the one contract (packages/contracts/src/billing-api.ts).
const validateAuthenticate = createBodyValidator<AuthenticateRequest>(AuthenticateRequestSchema);
const validateAdmission = createBodyValidator<AdmissionRequest>(AdmissionRequestSchema);
const validateSettle = createBodyValidator<SettleRequest>(SettleRequestSchema);
const validatePublishMarks = createBodyValidator<PublishMarksRequest>(PublishMarksRequestSchema);
const validateVoid = createBodyValidator<VoidRequest>(VoidRequestSchema);
const validateAdmissionBatch = createBodyValidator<AdmissionBatchRequest>(
  AdmissionBatchRequestSchema,
);
const validateSettleBatch = createBodyValidator<SettleBatchRequest>(SettleBatchRequestSchema);
const validateVoidBatch = createBodyValidator<VoidBatchRequest>(VoidBatchRequestSchema);

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

  // A route that places no hold: who is calling, and the request counted against the limit.
  router.post('/authenticate', EDGE, async (req, res) => {
    const body = validateAuthenticate(req.body);
    const principal = await identity.authenticator.authenticate(body.authorization);
    const subject = rateSubjectOf(principal);
    const rateLimit =
      body.count === false
        ? await identity.rateLimiter.peek(subject)
        : await identity.rateLimiter.enforce(subject);
    const answer: AuthenticateResponse = { caller: callerOf(principal), rateLimit };
    identity.lastUsed.touch(principal.accountId, principal.apiKeyName);
    res.json(answer);
  });

  // Everything before a job, from the credential itself: one call, idempotent on the hold id.
  router.post('/admissions', EDGE, async (req, res) => {
    const body = validateAdmission(req.body);
    // One PostgreSQL round trip: credential, limits, model, budget, balance and the hold.
    const { principal, admission } = await identity.admission.admit(
      body.authorization,
      admitRequestOf(body),
    );
    identity.lastUsed.touch(principal.accountId, principal.apiKeyName);
    res.json(admissionToWire(principal, admission));
  });

  // The admissions that queued in one edge while its previous call ran: one transaction, each
  // item answered as `/admissions` would have answered it.
  router.post('/admissions/batch', EDGE, async (req, res) => {
    const { items } = validateAdmissionBatch(req.body);
    const results = await identity.admission.admitMany(
      items.map((body) => ({ authorization: body.authorization, request: admitRequestOf(body) })),
    );
    const answer: BatchAnswer = {
      answers: results.map((result) => {
        if (!result.ok) return errorItemAnswer(result.error, requestLogger(req));
        const { principal, admission } = result.value;
        identity.lastUsed.touch(principal.accountId, principal.apiKeyName);
        return { status: 200, body: admissionToWire(principal, admission) };
      }),
    };
    res.json(answer);
  });

  // The worker's settlements, batched like admissions; billing groups them into statements.
  router.post('/holds/settlements', WORKER, async (req, res) => {
    const { items } = validateSettleBatch(req.body);
    const answers = await answerEach(req, items, async ({ holdId, usage }) =>
      settleToWire(await ledger.settleHold(holdId, usage)),
    );
    res.json({ answers } satisfies BatchAnswer);
  });

  router.post('/holds/voids', EDGE_OR_WORKER, async (req, res) => {
    const { items } = validateVoidBatch(req.body);
    const answers = await answerEach(req, items, async ({ holdId, usage }) =>
      voidToWire(await ledger.voidHold(holdId, usage)),
    );
    res.json({ answers } satisfies BatchAnswer);
  });

  router.post('/holds/:holdId/settle', WORKER, async (req, res) => {
    const usage = validateSettle(req.body);
    const result = await ledger.settleHold(param(req.params.holdId), usage);
    res.json(settleToWire(result));
  });

  // Edge confirms jobs reached the broker (batched): each hold then lives until its job's end.
  router.post('/holds/published', EDGE, async (req, res) => {
    const marks = validatePublishMarks(req.body).holds.map((mark) => ({
      holdId: mark.holdId,
      expiresAt: publishedHoldExpiry(mark.expiresAtMs),
    }));
    const answer: PublishMarksResponse = {
      published: [...(await ledger.markHoldsPublished(marks))],
    };
    res.json(answer);
  });

  router.post('/holds/:holdId/void', EDGE_OR_WORKER, async (req, res) => {
    // The body is optional (older callers send none): the usage record's outcome and timings.
    const usage = validateVoid(req.body ?? {});
    res.json(voidToWire(await ledger.voidHold(param(req.params.holdId), usage)));
  });

  // The answer of a settled hold reached nobody (its reply was unroutable, or edge gave up
  // waiting): the charge is given back.
  router.post('/holds/:holdId/refund', EDGE_OR_WORKER, async (req, res) => {
    res.json(refundToWire(await ledger.refundHold(param(req.params.holdId))));
  });

  // Edge handed the answer to its request but lost the reply's acknowledgement (ADR 0068).
  router.post('/holds/:holdId/delivered', EDGE, async (req, res) => {
    const holdId = param(req.params.holdId);
    const answer: AnswerDeliveredResponse = {
      holdId,
      ...(await ledger.markAnswerDelivered(holdId)),
    };
    res.json(answer);
  });

  // A redelivered job asks whether its hold is still pending before it calls a model again.
  router.get('/holds/:holdId', WORKER, async (req, res) => {
    const hold = await ledger.getHold(param(req.params.holdId));
    if (!hold) throw new GatewayError('resource_not_found', 'No such hold');
    const answer: HoldStatusResponse = { holdId: hold.id, status: hold.status };
    res.json(answer);
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
    res.json(await identity.scopedTokens.inspect(param(req.params.accountId), token));
  });

  router.post('/accounts/:accountId/scoped-tokens/revoke', EDGE, async (req, res) => {
    const token = requiredString(req.body, 'token');
    res.json(await identity.scopedTokens.revoke(token, { accountId: param(req.params.accountId) }));
  });

  router.get('/models', EDGE_OR_WORKER, async (_req, res) => {
    const answer: CatalogListResponse = {
      models: (await identity.catalog.list()).map(catalogEntryToWire),
    };
    res.json(answer);
  });

  router.get('/models/*modelId', EDGE_OR_WORKER, async (req, res) => {
    res.json(catalogEntryToWire(await identity.catalog.get(modelIdParam(req.params.modelId))));
  });

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
function admitRequestOf(body: AdmissionRequest): CredentialAdmitRequest {
  return {
    model: body.model,
    estimate: body.estimate,
    priority: body.priority,
    holdId: body.holdId,
    ...(body.providers ? { providers: body.providers } : {}),
    ...(body.kinds ? { kinds: body.kinds } : {}),
    ...(body.nodeUnsupportedParameter === undefined
      ? {}
      : { nodeUnsupportedParameter: body.nodeUnsupportedParameter }),
    ...(body.media === undefined ? {} : { media: body.media }),
    ...(body.endpoint === undefined ? {} : { endpoint: body.endpoint }),
    ...(body.requestId === undefined ? {} : { requestId: body.requestId }),
  };
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
export function callerOf(principal: Principal): Caller {
  return {
    accountId: principal.accountId,
    kind: principal.kind,
    apiKeyName: principal.apiKeyName,
    webhookFormat: principal.webhookFormat,
    tokenModels: principal.token?.models ?? null,
  };
}

/** The contract's admission answer. */
export function admissionToWire(principal: Principal, admission: Admission): AdmissionResponse {
  return {
    caller: callerOf(principal),
    hold: {
      id: admission.hold.id,
      amountMicroDzd: microDzdToWire(admission.hold.amountMicroDzd),
      expiresAt: admission.hold.expiresAt.toISOString(),
    },
    model: {
      id: admission.model.id,
      kind: admission.model.kind,
      provider: admission.model.provider,
      updatedAt: admission.model.updatedAt.toISOString(),
    },
    rateLimit: admission.rateLimit,
    replayed: admission.hold.replayed,
    ...(admission.hold.replayed
      ? {}
      : {
          prices: {
            inputMicroDzdPerM: microDzdToWire(admission.model.inputPriceMicroDzdPerM),
            outputMicroDzdPerM: microDzdToWire(admission.model.outputPriceMicroDzdPerM),
          },
        }),
  };
}

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
