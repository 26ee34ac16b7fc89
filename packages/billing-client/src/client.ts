/*
 * The one client of billing's internal API, for edge and the inference worker: every call with
 * its answer or refusal, through its route in `BILLING_ROUTES`. Batching lives in batches.ts and
 * publish-marks.ts.
 */
import {
  BILLING_API_PREFIX,
  BILLING_ROUTES as R,
  checkedModelId,
  GatewayError,
  microDzdFromWire,
  type BillingRoute,
  type RouteInput,
} from '@gateway/contracts';
import type {
  AdmissionRequest,
  AdmissionResponse,
  AuthenticateResponse,
  BalanceResponse,
  CatalogEntry,
  DeletedResponse,
  IdempotencyClaim,
  IdempotencyRef,
  KeyInfo,
  Receipt,
  SettleRequest,
  HoldStatusResponse,
  AnswerDeliveredResponse,
  RefundResponse,
  ResponseContext,
  ResponseContextRequest,
  ResponseRecord,
  SaveResponseRequest,
  FinishResponseRequest,
  ScopedTokenCreated,
  ScopedTokenCreateRequest,
  ScopedTokenInspection,
  StoredResponse,
  UsageList,
  UsageLogPage,
  VoidRequest,
  NodeHealthReport,
} from '@gateway/contracts';
import {
  createInternalHttp,
  type InternalHttpOptions,
  type InternalRequest,
  type InternalResponse,
} from '@gateway/runtime';
import { CatalogCache } from './catalog-cache.js';
import { createDashboardBillingClient, type DashboardBillingClient } from './dashboard-client.js';
import {
  createOperatorClient,
  OPERATOR_API_PREFIX,
  type OperatorClient,
} from './operator-client.js';
import { createBatches, withCurrentRequestId, type BatchOptions } from './batches.js';
import { PublishMarks, type DeferredMark } from './publish-marks.js';
import { routeSender } from './route-sender.js';

/** An admission as callers use it: the hold amount as a bigint. */
export type Admission = Omit<AdmissionResponse, 'hold'> & {
  hold: { id: string; amountMicroDzd: bigint; expiresAt: string };
};

export type SettleOutcome =
  | { kind: 'settled'; costMicroDzd: bigint; balanceMicroDzd: bigint; replayed: boolean }
  /** The hold was voided or expired first (e.g. edge gave up waiting): nothing was charged. */
  | { kind: 'already_final'; reason: string };

export type VoidOutcome =
  { kind: 'voided' | 'expired'; replayed: boolean } | { kind: 'already_final'; reason: string };

/**
 * The one client of billing's internal API, used by edge and the inference worker. Every call
 * goes through its route in `BILLING_ROUTES` (packages/contracts/src/billing-routes.ts: path,
 * body and answer types; the schemas in billing-api.ts). Every refusal comes back as the GatewayError billing
 * decided, with its rate-limit details; billing down or too slow is 503 `service_unavailable`.
 */
export interface BillingClient {
  /**
   * Who is calling; counts one request against the account's limit (429 when over it) unless
   * `count` is false.
   */
  authenticate(
    authorization: string | undefined,
    options?: { count?: boolean },
  ): Promise<AuthenticateResponse>;
  /**
   * `GET /v1/key`'s answer: the credential's own view (budgets, spend, rate limit); refused like
   * `authenticate`, and never counted against the rate limit.
   */
  keyInfo(authorization: string | undefined): Promise<KeyInfo>;
  /** Everything before a job in one call, idempotent on `holdId`. */
  admit(request: AdmissionRequest): Promise<Admission>;
  settle(holdId: string, usage: SettleRequest): Promise<SettleOutcome>;
  /**
   * Idempotent; a hold already settled or voided is `already_final`, not an error. `usage`: the
   * request's usage-record outcome (`failed` when omitted) and timings.
   */
  void(holdId: string, usage?: VoidRequest): Promise<VoidOutcome>;
  /**
   * Gives back the charge of a settled hold whose answer was delivered to nobody; idempotent.
   * `not_settled`: the hold charged nothing (pending, voided, expired).
   */
  refund(holdId: string): Promise<{ status: RefundResponse['status']; refundedMicroDzd: bigint }>;
  /** The hold's answer reached its request though its reply's acknowledgement was lost. */
  markAnswerDelivered(holdId: string): Promise<AnswerDeliveredResponse>;
  /** The hold's status (worker only): a redelivered job runs its model only while pending. */
  holdStatus(holdId: string): Promise<HoldStatusResponse['status']>;
  /**
   * Edge queued the hold's job: billing keeps the hold until `expiresAtMs` (the job's end +
   * settlement time) instead of releasing it after its publish grace. Idempotent; false when
   * the hold is already final. Marks are batched (group commit); `close` sends the last ones.
   */
  published(holdId: string, expiresAtMs: number): Promise<boolean>;
  /**
   * `published`, sent after `delayMs` unless withdrawn first (the job ended and its hold is
   * final). For synchronous jobs, most of which end long before billing's publish grace.
   */
  publishedLater(holdId: string, expiresAtMs: number, delayMs: number): DeferredMark;
  /** From the cache unless the entry is older than `atLeastUpdatedAt` (an admission's). */
  getModel(id: string, atLeastUpdatedAt?: string): Promise<CatalogEntry>;
  listModels(): Promise<CatalogEntry[]>;
  /** Drops cached catalog entries (the catalog changed). */
  invalidateCatalog(): void;
  /** `GET /v1/user/balance`'s answer. */
  balance(accountId: string): Promise<BalanceResponse>;
  /** `GET /v1/usage` of one account: the query string as the client sent it (billing checks it). */
  usage(accountId: string, query: URLSearchParams): Promise<UsageList>;
  /** The account's request log, newest first (`?from&to&limit&cursor`). */
  usageRequests(accountId: string, query: URLSearchParams): Promise<UsageLogPage>;
  /** The same log as CSV, every page of the range (capped: USAGE_LIMITS.csvMaxRows). */
  usageRequestsCsv(accountId: string, query: URLSearchParams): Promise<string>;
  /** `GET /v1/requests/{id}`: the receipt of the account's request (X-Request-Id or job id). */
  receipt(accountId: string, requestId: string): Promise<Receipt>;
  /**
   * Stores a Responses API response of the account (`store: true`); 409 `conflict` when the id
   * is stored already, 404 `response_not_found` when its previous response is not the saver's.
   */
  saveResponse(accountId: string, responseId: string, body: SaveResponseRequest): Promise<void>;
  /**
   * A stored response as `reader` may read it: a scoped token's digest reads only what it
   * stored, null (an API key) everything of the account; 404 `response_not_found` otherwise.
   */
  responseRecord(
    accountId: string,
    responseId: string,
    reader: string | null,
  ): Promise<ResponseRecord>;
  /**
   * A background response's result replaces it, once; false when it was no longer in progress
   * (cancelled or finished first: nothing changed).
   */
  finishResponse(
    accountId: string,
    responseId: string,
    body: FinishResponseRequest,
  ): Promise<boolean>;
  /** What a new request continues: its `previous_response_id` chain and item references. */
  responseContext(accountId: string, body: ResponseContextRequest): Promise<ResponseContext>;
  /** Deletes a stored response the reader may read (404 `response_not_found` otherwise). */
  deleteResponse(
    accountId: string,
    responseId: string,
    reader: string | null,
  ): Promise<DeletedResponse>;
  /** `POST /v1/scoped-jwt`'s answer; `body` is the client's, checked by billing again. */
  createScopedToken(accountId: string, body: ScopedTokenCreateRequest): Promise<ScopedTokenCreated>;
  /** `GET /v1/scoped-jwt`'s answer: a token of the account. */
  inspectScopedToken(accountId: string, token: string): Promise<ScopedTokenInspection>;
  /** `DELETE /v1/scoped-jwt`'s answer: the token, revoked (idempotent). */
  revokeScopedToken(accountId: string, token: string): Promise<ScopedTokenInspection>;
  /**
   * Claims a key for `leaseMs`. `holdId`: the hold the request will place; a claim left in
   * progress past its lease with that hold settled is refunded by billing (never answered).
   */
  claimIdempotencyKey(
    ref: IdempotencyRef,
    leaseMs: number,
    holdId?: string,
  ): Promise<IdempotencyClaim>;
  /** Stores the answer; 409 `conflict` when the claim was lost (then it must not be sent). */
  completeIdempotencyKey(ref: IdempotencyRef, response: StoredResponse): Promise<void>;
  releaseIdempotencyKey(ref: IdempotencyRef): Promise<void>;
  /** The worker's node observations; idempotent (last observation wins). */
  reportNodeHealth(report: NodeHealthReport): Promise<void>;
  /**
   * Edge's `/admin/v1` proxy only: an operator's request passed through verbatim (path relative
   * to the operator API, query as sent) and billing's answer as it is, status and body. Every
   * other caller uses the typed `operator` methods.
   */
  forwardAdmin(request: InternalRequest): Promise<InternalResponse>;
  /** The operator API as typed calls (edge's dashboard): answers of the contract, refusals thrown. */
  operator: OperatorClient;
  /** The dashboard's sessions and owner data (`/dashboard/*`): answers, refusals thrown. */
  dashboard: DashboardBillingClient;
  close(): Promise<void>;
}

export interface BillingClientOptions extends Omit<InternalHttpOptions, 'service'>, BatchOptions {
  /** How long a catalog entry is trusted without news of a change; 30 s by default. */
  catalogCacheTtlMs?: number;
}

/** Whether a call may be sent again when its connection failed: today's policy, call by call. */
interface RetryPolicy {
  retry: boolean;
}
/** Idempotent: tried again after a failed connection. */
const RETRIED: RetryPolicy = { retry: true };
/** Sent once: a retry after a lost answer could act twice (or answer 409 for what was done). */
const ONCE: RetryPolicy = { retry: false };

export function createBillingClient(options: BillingClientOptions): BillingClient {
  const http = createInternalHttp({ service: 'billing', ...options });
  /** A call of `BILLING_ROUTES`, each stating its retry policy. */
  const sender = routeSender(http, { prefix: BILLING_API_PREFIX });
  const send = <Called extends BillingRoute>(
    route: Called,
    input: RouteInput<Called>,
    policy: RetryPolicy,
  ) => sender.send(route, input, policy);
  const call = <Called extends BillingRoute>(
    route: Called,
    input: RouteInput<Called>,
    policy: RetryPolicy,
  ) => sender.call(route, input, policy);
  const account = (accountId: string) => ({ params: { accountId } });
  const hold = (holdId: string) => ({ params: { holdId } });
  const response = (accountId: string, responseId: string) => ({
    params: { accountId, responseId },
  });
  const batches = createBatches(http, options, {
    admit: (body) => call(R.admit, { body }, RETRIED),
    settle: ({ holdId, usage }) => call(R.settle, { ...hold(holdId), body: usage }, RETRIED),
    // An item without usage voids with an empty body (billing reads none as empty too).
    void: ({ holdId, usage }) => call(R.void, { ...hold(holdId), body: usage ?? {} }, RETRIED),
  });
  const publishMarks = new PublishMarks(async (holds) => {
    const answer = await call(R.publishMarks, { body: { holds } }, RETRIED);
    return new Set(answer.published);
  });
  const catalog = new CatalogCache({
    ttlMs: options.catalogCacheTtlMs ?? 30_000,
    // An id no catalog entry could have is `model_not_found` before anything is sent.
    fetchOne: (id) => call(R.getModel, { params: { modelId: checkedModelId(id) } }, RETRIED),
    fetchAll: async () => (await call(R.listModels, {}, RETRIED)).models,
  });

  return {
    authenticate: (authorization, { count = true } = {}) => {
      const body = {
        ...(authorization === undefined ? {} : { authorization }),
        ...(count ? {} : { count }),
      };
      // Retried only when it counts nothing: a retried count could count the request twice.
      return call(R.authenticate, { body }, { retry: !count });
    },
    keyInfo: (authorization) => {
      const body = authorization === undefined ? {} : { authorization };
      // A read: retried like an uncounted authentication.
      return call(R.keyInfo, { body }, RETRIED);
    },
    admit: async (request) => {
      // Idempotent on the hold id: a retry after a lost answer returns the same hold.
      const answer = await batches.admissions.submit(request);
      return {
        ...answer,
        hold: { ...answer.hold, amountMicroDzd: microDzdFromWire(answer.hold.amountMicroDzd) },
      };
    },
    settle: (holdId, usage) =>
      finalOrConflict(async () => {
        const answer = await batches.settlements.submit(withCurrentRequestId({ holdId, usage }));
        return {
          kind: 'settled',
          costMicroDzd: BigInt(answer.costMicroDzd),
          balanceMicroDzd: BigInt(answer.balance.balanceMicroDzd),
          replayed: answer.replayed,
        };
      }),
    published: (holdId, expiresAtMs) => publishMarks.mark(holdId, expiresAtMs),
    publishedLater: (holdId, expiresAtMs, delayMs) =>
      publishMarks.markLater(holdId, expiresAtMs, delayMs),
    void: (holdId, usage) =>
      finalOrConflict(async () => {
        const answer = await batches.voids.submit(
          withCurrentRequestId({ holdId, ...(usage ? { usage } : {}) }),
        );
        return { kind: answer.status, replayed: answer.replayed };
      }),
    markAnswerDelivered: (holdId) => call(R.markDelivered, hold(holdId), RETRIED),
    refund: async (holdId) => {
      const answer = await call(R.refund, hold(holdId), RETRIED);
      return { status: answer.status, refundedMicroDzd: microDzdFromWire(answer.refundedMicroDzd) };
    },
    holdStatus: async (holdId) => (await call(R.holdStatus, hold(holdId), RETRIED)).status,
    getModel: (id, atLeastUpdatedAt) => catalog.get(id, atLeastUpdatedAt),
    listModels: () => catalog.list(),
    invalidateCatalog: () => catalog.clear(),
    balance: (accountId) => call(R.balance, account(accountId), RETRIED),
    usage: (accountId, query) => call(R.usage, { ...account(accountId), query }, RETRIED),
    usageRequests: (accountId, query) =>
      call(R.usageRequests, { ...account(accountId), query }, RETRIED),
    usageRequestsCsv: async (accountId, query) => {
      const headers = { Accept: 'text/csv' };
      const csv = await send(R.usageRequests, { ...account(accountId), query, headers }, ONCE);
      return csv.body.toString('utf8');
    },
    receipt: (accountId, requestId) =>
      call(R.receipt, { params: { accountId, requestId } }, RETRIED),
    saveResponse: async (accountId, responseId, body) => {
      // Not retried: a retry after a lost answer would be 409 for a response that was stored.
      await send(R.saveResponse, { ...response(accountId, responseId), body }, ONCE);
    },
    responseRecord: (accountId, responseId, reader) =>
      call(
        R.responseRecord,
        { ...response(accountId, responseId), query: readerQuery(reader) },
        RETRIED,
      ),
    // Retried: a second finish after a lost answer is `finished: false`, and changes nothing.
    finishResponse: async (accountId, responseId, body) =>
      (await call(R.finishResponse, { ...response(accountId, responseId), body }, RETRIED))
        .finished,
    responseContext: (accountId, body) =>
      call(R.responseContext, { ...account(accountId), body }, RETRIED),
    deleteResponse: (accountId, responseId, reader) =>
      call(
        R.deleteResponse,
        { ...response(accountId, responseId), query: readerQuery(reader) },
        ONCE,
      ),
    createScopedToken: (accountId, body) =>
      call(R.createScopedToken, { ...account(accountId), body }, ONCE),
    inspectScopedToken: (accountId, token) =>
      call(R.inspectScopedToken, { ...account(accountId), body: { token } }, RETRIED),
    revokeScopedToken: (accountId, token) =>
      call(R.revokeScopedToken, { ...account(accountId), body: { token } }, RETRIED),
    claimIdempotencyKey: (ref, leaseMs, holdId) =>
      call(
        R.claimIdempotencyKey,
        { body: { ...ref, leaseMs, ...(holdId === undefined ? {} : { holdId }) } },
        ONCE,
      ),
    completeIdempotencyKey: async (ref, response) => {
      await send(R.completeIdempotencyKey, { body: { ...ref, response } }, ONCE);
    },
    releaseIdempotencyKey: async (ref) => {
      await send(R.releaseIdempotencyKey, { body: ref }, RETRIED);
    },
    reportNodeHealth: async (report) => {
      await send(R.reportNodeHealth, { body: report }, RETRIED);
    },
    forwardAdmin: (request) => http({ ...request, path: `${OPERATOR_API_PREFIX}${request.path}` }),
    operator: createOperatorClient(http),
    dashboard: createDashboardBillingClient(http),
    close: async () => {
      await Promise.all([publishMarks.flush(), ...Object.values(batches).map((b) => b.flush())]);
      await http.close();
    },
  };
}

/** A scoped token's digest as `?reader=`; none for an API key. */
const readerQuery = (reader: string | null) =>
  new URLSearchParams(reader === null ? {} : { reader });

/** 409 `conflict`: the hold was finalised by someone else first; whoever is first wins. */
async function finalOrConflict<T>(
  work: () => Promise<T>,
): Promise<T | { kind: 'already_final'; reason: string }> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof GatewayError && error.code === 'conflict') {
      return { kind: 'already_final', reason: error.message };
    }
    throw error;
  }
}
