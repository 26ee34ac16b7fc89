import {
  AdmissionBatchRequestSchema,
  AdmissionRequestSchema,
  AdmissionResponseSchema,
  AnswerDeliveredResponseSchema,
  AuthenticateRequestSchema,
  AuthenticateResponseSchema,
  BalanceResponseSchema,
  BatchAnswerSchema,
  CatalogEntrySchema,
  CatalogListResponseSchema,
  HoldStatusResponseSchema,
  IdempotencyClaimRequestSchema,
  IdempotencyClaimSchema,
  IdempotencyCompleteRequestSchema,
  IdempotencyRefSchema,
  NodeHealthAcceptedSchema,
  NodeHealthReportSchema,
  PublishMarksRequestSchema,
  PublishMarksResponseSchema,
  RefundResponseSchema,
  ScopedTokenCreatedSchema,
  ScopedTokenInspectionSchema,
  ScopedTokenRefSchema,
  SettleBatchRequestSchema,
  SettleRequestSchema,
  SettleResponseSchema,
  VoidBatchRequestSchema,
  VoidRequestSchema,
  VoidResponseSchema,
} from './billing-api.js';
import { KeyInfoSchema } from './budgets-api.js';
import { ReceiptSchema } from './receipts-api.js';
import {
  DeletedResponseSchema,
  FinishedResponseSchema,
  FinishResponseRequestSchema,
  ResponseContextRequestSchema,
  ResponseContextSchema,
  ResponseRecordSchema,
  SaveResponseRequestSchema,
} from './responses-state-api.js';
import type { Route } from './routes.js';
import { ScopedTokenCreateRequestSchema } from './schemas/scoped-token.js';
import { UsageListSchema, UsageLogPageSchema } from './usage-api.js';

/*
 * Billing's internal API for edge and the inference worker (under `BILLING_API_PREFIX`, outside
 * `/admin` and `/dashboard`), every route declared once: billing serves them and checks the
 * caller's credential against `caller`; billing-client calls them. Bodies and answers are
 * billing-api.ts's (and the public shapes edge passes through: the balance, usage, receipts,
 * scoped tokens, `GET /v1/key`). Money is a string of integer µDZD, dates ISO 8601.
 */

/** Whose internal credential billing accepts on a route (403 `forbidden` for the other). */
export type BillingCaller = 'edge' | 'worker' | 'both';

export interface BillingRoute extends Route {
  readonly caller: BillingCaller;
}

export const BILLING_ROUTES = {
  authenticate: {
    method: 'POST',
    path: '/authenticate',
    caller: 'edge',
    body: AuthenticateRequestSchema,
    answer: AuthenticateResponseSchema,
    refusals: [429],
    summary:
      'Who is calling (a route that places no hold), counted against the rate limit unless ' +
      '`count` is false; refusals carry the decision as `X-RateLimit-*`',
  },
  keyInfo: {
    method: 'POST',
    path: '/key',
    caller: 'edge',
    body: AuthenticateRequestSchema,
    answer: KeyInfoSchema,
    summary:
      "`GET /v1/key`'s answer: the credential's budgets, spend and rate limit (never counted)",
  },
  admit: {
    method: 'POST',
    path: '/admissions',
    caller: 'edge',
    body: AdmissionRequestSchema,
    answer: AdmissionResponseSchema,
    refusals: [409, 429],
    summary:
      "Everything before a job in one transaction, and the hold under the caller's id " +
      '(idempotent on it: a retry answers the same hold, `replayed`)',
  },
  admitBatch: {
    method: 'POST',
    path: '/admissions/batch',
    caller: 'edge',
    body: AdmissionBatchRequestSchema,
    answer: BatchAnswerSchema,
    summary: 'Admissions in one transaction, each item answered as `/admissions` would answer it',
  },
  settle: {
    method: 'POST',
    path: '/holds/:holdId/settle',
    caller: 'worker',
    body: SettleRequestSchema,
    answer: SettleResponseSchema,
    refusals: [409],
    summary: 'Charge the usage and release the rest of the hold (idempotent; 409 after a void)',
  },
  settleBatch: {
    method: 'POST',
    path: '/holds/settlements',
    caller: 'worker',
    body: SettleBatchRequestSchema,
    answer: BatchAnswerSchema,
    summary: 'Settlements, each item answered as `…/settle` would answer it',
  },
  void: {
    method: 'POST',
    path: '/holds/:holdId/void',
    caller: 'both',
    body: VoidRequestSchema,
    answer: VoidResponseSchema,
    refusals: [409],
    summary:
      'Release the hold without a charge (idempotent; 409 after a settle); a missing body is ' +
      'an empty one',
  },
  voidBatch: {
    method: 'POST',
    path: '/holds/voids',
    caller: 'both',
    body: VoidBatchRequestSchema,
    answer: BatchAnswerSchema,
    summary: 'Voids, each item answered as `…/void` would answer it',
  },
  refund: {
    method: 'POST',
    path: '/holds/:holdId/refund',
    caller: 'both',
    answer: RefundResponseSchema,
    refusals: [409],
    summary:
      "Give back a settled hold's charge, its answer delivered to nobody (idempotent; " +
      '`not_settled` when it charged nothing)',
  },
  markDelivered: {
    method: 'POST',
    path: '/holds/:holdId/delivered',
    caller: 'edge',
    answer: AnswerDeliveredResponseSchema,
    summary:
      "The hold's answer reached its request though the reply's acknowledgement was lost: an " +
      'unread copy is not refunded',
  },
  publishMarks: {
    method: 'POST',
    path: '/holds/published',
    caller: 'edge',
    body: PublishMarksRequestSchema,
    answer: PublishMarksResponseSchema,
    summary:
      "These holds' jobs reached the broker: each lives until its `expiresAtMs` (the holds " +
      'marked; one not listed was final or unknown)',
  },
  holdStatus: {
    method: 'GET',
    path: '/holds/:holdId',
    caller: 'worker',
    answer: HoldStatusResponseSchema,
    summary: "The hold's status: a redelivered job runs its model only while it is pending",
  },
  listModels: {
    method: 'GET',
    path: '/models',
    caller: 'both',
    answer: CatalogListResponseSchema,
    summary: 'The catalog as edge and the worker read it (prices stay in billing)',
  },
  getModel: {
    method: 'GET',
    path: '/models/*modelId',
    caller: 'both',
    answer: CatalogEntrySchema,
    summary: 'One catalog entry (model ids contain `/`)',
  },
  balance: {
    method: 'GET',
    path: '/accounts/:accountId/balance',
    caller: 'edge',
    answer: BalanceResponseSchema,
    summary: "`GET /v1/user/balance`'s answer",
  },
  usage: {
    method: 'GET',
    path: '/accounts/:accountId/usage',
    caller: 'edge',
    answer: UsageListSchema,
    summary: '`GET /v1/usage` of the account (`?from&to&group_by`, as the client sent it)',
  },
  usageRequests: {
    method: 'GET',
    path: '/accounts/:accountId/usage/requests',
    caller: 'edge',
    answer: UsageLogPageSchema,
    summary:
      "The account's request log, newest first (`?from&to&limit&cursor`); CSV, every page of " +
      'the range, with `Accept: text/csv` or `?format=csv`',
  },
  receipt: {
    method: 'GET',
    path: '/accounts/:accountId/requests/:requestId',
    caller: 'edge',
    answer: ReceiptSchema,
    summary: 'The receipt of a request of the account (its `X-Request-Id` or job id)',
  },
  saveResponse: {
    method: 'PUT',
    path: '/accounts/:accountId/responses/:responseId',
    caller: 'edge',
    body: SaveResponseRequestSchema,
    status: 204,
    refusals: [409],
    summary: 'Store a Responses API response (409 `conflict` when the id is stored already)',
  },
  responseRecord: {
    method: 'GET',
    path: '/accounts/:accountId/responses/:responseId',
    caller: 'edge',
    answer: ResponseRecordSchema,
    summary:
      'A stored response as `?reader=` may read it (none: an API key, the whole account); 404 ' +
      '`response_not_found` otherwise',
  },
  finishResponse: {
    method: 'POST',
    path: '/accounts/:accountId/responses/:responseId/finish',
    caller: 'edge',
    body: FinishResponseRequestSchema,
    answer: FinishedResponseSchema,
    summary:
      "A background response's result replaces it, once (`finished: false` when it was no " +
      'longer in progress)',
  },
  responseContext: {
    method: 'POST',
    path: '/accounts/:accountId/responses/context',
    caller: 'edge',
    body: ResponseContextRequestSchema,
    answer: ResponseContextSchema,
    summary: 'What a new request continues: its `previous_response_id` chain and item references',
  },
  deleteResponse: {
    method: 'DELETE',
    path: '/accounts/:accountId/responses/:responseId',
    caller: 'edge',
    answer: DeletedResponseSchema,
    summary: 'Delete a stored response `?reader=` may read',
  },
  createScopedToken: {
    method: 'POST',
    path: '/accounts/:accountId/scoped-tokens',
    caller: 'edge',
    body: ScopedTokenCreateRequestSchema,
    answer: ScopedTokenCreatedSchema,
    status: 201,
    summary: "`POST /v1/scoped-jwt`'s answer: a token signed by the named key, shown once",
  },
  inspectScopedToken: {
    method: 'POST',
    path: '/accounts/:accountId/scoped-tokens/inspect',
    caller: 'edge',
    body: ScopedTokenRefSchema,
    answer: ScopedTokenInspectionSchema,
    summary: "`GET /v1/scoped-jwt`'s answer: a token of the account",
  },
  revokeScopedToken: {
    method: 'POST',
    path: '/accounts/:accountId/scoped-tokens/revoke',
    caller: 'edge',
    body: ScopedTokenRefSchema,
    answer: ScopedTokenInspectionSchema,
    summary: "`DELETE /v1/scoped-jwt`'s answer: the token of the account, revoked (idempotent)",
  },
  claimIdempotencyKey: {
    method: 'POST',
    path: '/idempotency/claim',
    caller: 'edge',
    body: IdempotencyClaimRequestSchema,
    answer: IdempotencyClaimSchema,
    refusals: [409],
    summary:
      'Claim an Idempotency-Key for a lease, or the stored answer to replay (409 ' +
      '`idempotency_key_conflict`: another request; `conflict`: in progress)',
  },
  completeIdempotencyKey: {
    method: 'POST',
    path: '/idempotency/complete',
    caller: 'edge',
    body: IdempotencyCompleteRequestSchema,
    status: 204,
    refusals: [409],
    summary: 'Store the answer of a claimed key (409 `conflict` when the claim was lost)',
  },
  releaseIdempotencyKey: {
    method: 'POST',
    path: '/idempotency/release',
    caller: 'edge',
    body: IdempotencyRefSchema,
    status: 204,
    summary: 'Free a claim that produced nothing worth replaying (a no-op when not ours)',
  },
  reportNodeHealth: {
    method: 'POST',
    path: '/nodes/health',
    caller: 'worker',
    body: NodeHealthReportSchema,
    answer: NodeHealthAcceptedSchema,
    summary: "The worker's observations of its model nodes (the last observation wins)",
  },
} as const satisfies Record<string, BillingRoute>;
