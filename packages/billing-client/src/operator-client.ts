import {
  BILLING_API_PREFIX,
  OPERATOR_ROUTES,
  type Route,
  type RouteInput,
} from '@gateway/contracts';
import type {
  AccountCreateRequest,
  AccountPatchRequest,
  AlertSettingsPutRequest,
  AlertSettingsView,
  ApiKeyCreateRequest,
  ApiKeyList,
  BudgetList,
  BudgetPutRequest,
  BudgetView,
  CatalogModel,
  CatalogModelList,
  CreditRequest,
  CreditResult,
  DashboardScopedTokenList,
  InvitationCreateRequest,
  InvitationIssued,
  IssuedApiKey,
  KeyRateLimitList,
  KeyRateLimitPutRequest,
  KeyRateLimitView,
  LedgerCheck,
  ClosedPeriod,
  ClosedPeriodList,
  PeriodCloseRequest,
  PeriodReport,
  LedgerEntryPage,
  ModelPutRequest,
  NodeHealthList,
  OpenHoldList,
  OperatorAccount,
  OperatorAccountDetail,
  OperatorAccountList,
  Receipt,
  Statement,
  UsageList,
  UsageLogPage,
} from '@gateway/contracts';
import type { InternalHttp } from '@gateway/runtime';
import { routeSender } from './route-sender.js';

/** Billing serves the operator API here; edge's `/admin/v1` maps onto it path for path. */
export const OPERATOR_API_PREFIX = `${BILLING_API_PREFIX}/admin`;

/** Whose budget or rate limits: an API key's (by name) or a scoped token's (by id). */
export type BudgetOwnerRef = { apiKey: string } | { scopedTokenId: string };

const R = OPERATOR_ROUTES;

/**
 * The operator API (`/internal/v1/admin`) as typed calls, for edge's dashboard: the contract's
 * answer, or billing's refusal thrown (billing refusing edge's own credential: 500, edge's
 * fault). Queries are passed as the caller picked them; billing checks them.
 */
export interface OperatorClient {
  listAccounts(query: URLSearchParams): Promise<OperatorAccountList>;
  createAccount(body: AccountCreateRequest): Promise<OperatorAccount>;
  getAccount(id: string): Promise<OperatorAccountDetail>;
  patchAccount(id: string, body: AccountPatchRequest): Promise<OperatorAccountDetail>;
  setSuspended(id: string, action: 'suspend' | 'unsuspend'): Promise<OperatorAccount>;
  listApiKeys(id: string): Promise<ApiKeyList>;
  /** The account's registered scoped tokens, newest first (`?limit`, `?cursor`). */
  listScopedTokens(id: string, query: URLSearchParams): Promise<DashboardScopedTokenList>;
  createApiKey(id: string, body: ApiKeyCreateRequest): Promise<IssuedApiKey>;
  regenerateApiKey(id: string, name: string): Promise<IssuedApiKey>;
  deleteApiKey(id: string, name: string): Promise<void>;
  /** `idempotencyKey`: the same key and body credit once. */
  credit(id: string, body: CreditRequest, idempotencyKey: string): Promise<CreditResult>;
  /** The invitation without its link (edge adds it on the public origin). */
  invite(id: string, body: InvitationCreateRequest): Promise<InvitationIssued>;
  statement(id: string, range: URLSearchParams): Promise<Statement>;
  /** The account's open holds, oldest first (at most `OPEN_HOLDS_MAX`). */
  openHolds(id: string): Promise<OpenHoldList>;
  statementCsv(id: string, range: URLSearchParams): Promise<Buffer>;
  listModels(): Promise<CatalogModelList>;
  putModel(id: string, body: ModelPutRequest): Promise<CatalogModel>;
  nodeHealth(): Promise<NodeHealthList>;
  ledgerEntries(query: URLSearchParams): Promise<LedgerEntryPage>;
  ledgerCheck(): Promise<LedgerCheck>;
  /** Finance's period report (`?from&to&time_zone&limit&cursor`). */
  ledgerReport(query: URLSearchParams): Promise<PeriodReport>;
  /** One table of it as CSV (`?section=`). */
  ledgerReportCsv(query: URLSearchParams): Promise<Buffer>;
  closedPeriods(): Promise<ClosedPeriodList>;
  /** 409 `conflict` before the month ended or once it is closed. */
  closePeriod(period: string, body: PeriodCloseRequest): Promise<ClosedPeriod>;
  usage(query: URLSearchParams): Promise<UsageList>;
  usageRequests(query: URLSearchParams): Promise<UsageLogPage>;
  usageRequestsCsv(query: URLSearchParams): Promise<Buffer>;
  /** Budgets: 404 `resource_not_found` for an unknown account, key, token or budget. */
  listBudgets(id: string): Promise<BudgetList>;
  getBudget(id: string, owner: BudgetOwnerRef): Promise<BudgetView>;
  putBudget(id: string, owner: BudgetOwnerRef, body: BudgetPutRequest): Promise<BudgetView>;
  removeBudget(id: string, owner: BudgetOwnerRef): Promise<void>;
  /** Per-key rate limits: 404 for an unknown account, key or token. */
  listKeyRateLimits(id: string): Promise<KeyRateLimitList>;
  getKeyRateLimit(id: string, owner: BudgetOwnerRef): Promise<KeyRateLimitView>;
  putKeyRateLimit(
    id: string,
    owner: BudgetOwnerRef,
    body: KeyRateLimitPutRequest,
  ): Promise<KeyRateLimitView>;
  removeKeyRateLimit(id: string, owner: BudgetOwnerRef): Promise<void>;
  /** A request's receipt: 404 for an unknown account or request. */
  receipt(id: string, requestId: string): Promise<Receipt>;
  /** Account alerts: 404 for an unknown account, or (get, remove) no settings. */
  getAlerts(id: string): Promise<AlertSettingsView>;
  putAlerts(id: string, body: AlertSettingsPutRequest): Promise<AlertSettingsView>;
  removeAlerts(id: string): Promise<void>;
}

export function createOperatorClient(http: InternalHttp): OperatorClient {
  const { send, call, done } = routeSender(http, {
    prefix: OPERATOR_API_PREFIX,
    unauthorizedIsOurs: true,
  });
  const csv = async <Called extends Route>(route: Called, input: RouteInput<Called>) =>
    (await send(route, input, { accept: 'text/csv' })).body;
  const account = (id: string) => ({ params: { id } });
  const key = (id: string, name: string) => ({ params: { id, name } });
  const token = (id: string, tokenId: string) => ({ params: { id, tokenId } });
  return {
    listAccounts: (query) => call(R.listAccounts, { query }),
    createAccount: (body) => call(R.createAccount, { body }),
    getAccount: (id) => call(R.getAccount, account(id)),
    patchAccount: (id, body) => call(R.patchAccount, { ...account(id), body }),
    setSuspended: (id, action) =>
      call(action === 'suspend' ? R.suspendAccount : R.unsuspendAccount, account(id)),
    listApiKeys: (id) => call(R.listApiKeys, account(id)),
    listScopedTokens: (id, query) => call(R.listScopedTokens, { ...account(id), query }),
    createApiKey: (id, body) => call(R.createApiKey, { ...account(id), body }),
    regenerateApiKey: (id, name) => call(R.regenerateApiKey, key(id, name)),
    deleteApiKey: (id, name) => done(R.deleteApiKey, key(id, name)),
    openHolds: (id) => call(R.openHolds, account(id)),
    credit: (id, body, idempotencyKey) =>
      call(R.credit, { ...account(id), body, headers: { 'Idempotency-Key': idempotencyKey } }),
    invite: (id, body) => call(R.invite, { ...account(id), body }),
    statement: (id, range) => call(R.statement, { ...account(id), query: range }),
    statementCsv: (id, range) => csv(R.statement, { ...account(id), query: range }),
    listModels: () => call<typeof R.listModels, CatalogModelList>(R.listModels, {}),
    putModel: (id, body) =>
      call<typeof R.putModel, CatalogModel>(R.putModel, { params: { model: id }, body }),
    nodeHealth: () => call<typeof R.nodeHealth, NodeHealthList>(R.nodeHealth, {}),
    ledgerEntries: (query) => call(R.ledgerEntries, { query }),
    ledgerCheck: () => call(R.ledgerCheck, {}),
    ledgerReport: (query) => call(R.ledgerReport, { query }),
    ledgerReportCsv: (query) => csv(R.ledgerReport, { query }),
    closedPeriods: () => call(R.closedPeriods, {}),
    closePeriod: (period, body) => call(R.closePeriod, { params: { period }, body }),
    usage: (query) => call(R.usage, { query }),
    usageRequests: (query) =>
      call<typeof R.usageRequests, UsageLogPage>(R.usageRequests, { query }),
    usageRequestsCsv: (query) => csv(R.usageRequests, { query }),
    listBudgets: (id) => call(R.listBudgets, account(id)),
    receipt: (id, requestId) => call(R.receipt, { params: { id, requestId } }),
    getBudget: (id, owner) =>
      'apiKey' in owner
        ? call(R.getKeyBudget, key(id, owner.apiKey))
        : call(R.getTokenBudget, token(id, owner.scopedTokenId)),
    putBudget: (id, owner, body) =>
      'apiKey' in owner
        ? call(R.putKeyBudget, { ...key(id, owner.apiKey), body })
        : call(R.putTokenBudget, { ...token(id, owner.scopedTokenId), body }),
    removeBudget: (id, owner) =>
      'apiKey' in owner
        ? done(R.removeKeyBudget, key(id, owner.apiKey))
        : done(R.removeTokenBudget, token(id, owner.scopedTokenId)),
    listKeyRateLimits: (id) => call(R.listKeyRateLimits, account(id)),
    getKeyRateLimit: (id, owner) =>
      'apiKey' in owner
        ? call(R.getKeyRateLimit, key(id, owner.apiKey))
        : call(R.getTokenRateLimit, token(id, owner.scopedTokenId)),
    putKeyRateLimit: (id, owner, body) =>
      'apiKey' in owner
        ? call(R.putKeyRateLimit, { ...key(id, owner.apiKey), body })
        : call(R.putTokenRateLimit, { ...token(id, owner.scopedTokenId), body }),
    removeKeyRateLimit: (id, owner) =>
      'apiKey' in owner
        ? done(R.removeKeyRateLimit, key(id, owner.apiKey))
        : done(R.removeTokenRateLimit, token(id, owner.scopedTokenId)),
    getAlerts: (id) => call(R.getAlerts, account(id)),
    putAlerts: (id, body) => call(R.putAlerts, { ...account(id), body }),
    removeAlerts: (id) => done(R.removeAlerts, account(id)),
  };
}
