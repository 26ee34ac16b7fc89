import { BILLING_API_PREFIX, pathSegment } from '@gateway/contracts';
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
  InvitationCreateRequest,
  InvitationCreated,
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
  OperatorAccount,
  OperatorAccountDetail,
  OperatorAccountList,
  Receipt,
  Statement,
  UsageList,
  UsageLogPage,
} from '@gateway/contracts';
import { jsonOf, type InternalHttp, type InternalRequest } from '@gateway/runtime';
import { credentialRefused, errorFromAnswer } from './wire-errors.js';

/** Billing serves the operator API here; edge's `/admin/v1` maps onto it path for path. */
export const OPERATOR_API_PREFIX = `${BILLING_API_PREFIX}/admin`;

const account = (id: string) => `/accounts/${pathSegment(id)}`;
const apiKey = (id: string, name: string) => `${account(id)}/api-keys/${pathSegment(name)}`;
const withQuery = (path: string, query: URLSearchParams) =>
  query.size === 0 ? path : `${path}?${query.toString()}`;

/** Every path of the operator API the typed methods call, relative to `OPERATOR_API_PREFIX`. */
export const OPERATOR_PATHS = {
  accounts: '/accounts',
  account,
  suspension: (id: string, action: 'suspend' | 'unsuspend') => `${account(id)}/${action}`,
  apiKeys: (id: string) => `${account(id)}/api-keys`,
  apiKey,
  regenerateApiKey: (id: string, name: string) => `${apiKey(id, name)}/regenerate`,
  credits: (id: string) => `${account(id)}/credits`,
  invitations: (id: string) => `${account(id)}/invitations`,
  statement: (id: string) => `${account(id)}/statement`,
  models: '/models',
  // Each segment encoded, the id not judged here: billing answers 400 naming the id's rule.
  model: (id: string) => `/models/${id.split('/').map(pathSegment).join('/')}`,
  nodeHealth: '/nodes/health',
  ledgerEntries: '/ledger/entries',
  ledgerCheck: '/ledger/check',
  ledgerReport: '/ledger/report',
  ledgerPeriods: '/ledger/periods',
  closePeriod: (period: string) => `/ledger/periods/${pathSegment(period)}/close`,
  usage: '/usage',
  usageRequests: '/usage/requests',
  budgets: (id: string) => `${account(id)}/budgets`,
  alerts: (id: string) => `${account(id)}/alerts`,
  receipt: (id: string, requestId: string) => `${account(id)}/requests/${pathSegment(requestId)}`,
  keyBudget: (id: string, name: string) => `${apiKey(id, name)}/budget`,
  tokenBudget: (id: string, tokenId: string) =>
    `${account(id)}/scoped-tokens/${pathSegment(tokenId)}/budget`,
  rateLimits: (id: string) => `${account(id)}/rate-limits`,
  keyRateLimit: (id: string, name: string) => `${apiKey(id, name)}/rate-limit`,
  tokenRateLimit: (id: string, tokenId: string) =>
    `${account(id)}/scoped-tokens/${pathSegment(tokenId)}/rate-limit`,
} as const;

/** Whose budget: an API key's (by name) or a scoped token's (by id). */
export type BudgetOwnerRef = { apiKey: string } | { scopedTokenId: string };

const budgetPath = (id: string, owner: BudgetOwnerRef) =>
  'apiKey' in owner
    ? OPERATOR_PATHS.keyBudget(id, owner.apiKey)
    : OPERATOR_PATHS.tokenBudget(id, owner.scopedTokenId);

const rateLimitPath = (id: string, owner: BudgetOwnerRef) =>
  'apiKey' in owner
    ? OPERATOR_PATHS.keyRateLimit(id, owner.apiKey)
    : OPERATOR_PATHS.tokenRateLimit(id, owner.scopedTokenId);

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
  createApiKey(id: string, body: ApiKeyCreateRequest): Promise<IssuedApiKey>;
  regenerateApiKey(id: string, name: string): Promise<IssuedApiKey>;
  deleteApiKey(id: string, name: string): Promise<void>;
  /** `idempotencyKey`: the same key and body credit once. */
  credit(id: string, body: CreditRequest, idempotencyKey: string): Promise<CreditResult>;
  /** The invitation without its link (edge adds it on the public origin). */
  invite(id: string, body: InvitationCreateRequest): Promise<Omit<InvitationCreated, 'url'>>;
  statement(id: string, range: URLSearchParams): Promise<Statement>;
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
  const send = async (request: InternalRequest) => {
    const answer = await http({ ...request, path: `${OPERATOR_API_PREFIX}${request.path}` });
    if (answer.status === 401) throw credentialRefused('billing');
    if (answer.status >= 400) throw errorFromAnswer('billing', answer);
    return answer;
  };
  const call = async <T>(request: InternalRequest) => jsonOf<T>(await send(request));
  const get = <T>(path: string) => call<T>({ method: 'GET', path });
  const post = <T>(path: string, body?: unknown) => call<T>({ method: 'POST', path, body });
  const csv = async (path: string) =>
    (await send({ method: 'GET', path, headers: { Accept: 'text/csv' } })).body;
  const paths = OPERATOR_PATHS;
  return {
    listAccounts: (query) => get(withQuery(paths.accounts, query)),
    createAccount: (body) => post(paths.accounts, body),
    getAccount: (id) => get(paths.account(id)),
    patchAccount: (id, body) => call({ method: 'PATCH', path: paths.account(id), body }),
    setSuspended: (id, action) => post(paths.suspension(id, action)),
    listApiKeys: (id) => get(paths.apiKeys(id)),
    createApiKey: (id, body) => post(paths.apiKeys(id), body),
    regenerateApiKey: (id, name) => post(paths.regenerateApiKey(id, name)),
    deleteApiKey: async (id, name) => {
      await send({ method: 'DELETE', path: paths.apiKey(id, name) });
    },
    credit: (id, body, idempotencyKey) =>
      call({
        method: 'POST',
        path: paths.credits(id),
        headers: { 'Idempotency-Key': idempotencyKey },
        body,
      }),
    invite: (id, body) => post(paths.invitations(id), body),
    statement: (id, range) => get(withQuery(paths.statement(id), range)),
    statementCsv: (id, range) => csv(withQuery(paths.statement(id), range)),
    listModels: () => get(paths.models),
    putModel: (id, body) => call({ method: 'PUT', path: paths.model(id), body }),
    nodeHealth: () => get(paths.nodeHealth),
    ledgerEntries: (query) => get(withQuery(paths.ledgerEntries, query)),
    ledgerCheck: () => get(paths.ledgerCheck),
    ledgerReport: (query) => get(withQuery(paths.ledgerReport, query)),
    ledgerReportCsv: (query) => csv(withQuery(paths.ledgerReport, query)),
    closedPeriods: () => get(paths.ledgerPeriods),
    closePeriod: (period, body) => post(paths.closePeriod(period), body),
    usage: (query) => get(withQuery(paths.usage, query)),
    usageRequests: (query) => get(withQuery(paths.usageRequests, query)),
    usageRequestsCsv: (query) => csv(withQuery(paths.usageRequests, query)),
    listBudgets: (id) => get(paths.budgets(id)),
    receipt: (id, requestId) => get(paths.receipt(id, requestId)),
    getBudget: (id, owner) => get(budgetPath(id, owner)),
    putBudget: (id, owner, body) => call({ method: 'PUT', path: budgetPath(id, owner), body }),
    removeBudget: async (id, owner) => {
      await send({ method: 'DELETE', path: budgetPath(id, owner) });
    },
    listKeyRateLimits: (id) => get(paths.rateLimits(id)),
    getKeyRateLimit: (id, owner) => get(rateLimitPath(id, owner)),
    putKeyRateLimit: (id, owner, body) =>
      call({ method: 'PUT', path: rateLimitPath(id, owner), body }),
    removeKeyRateLimit: async (id, owner) => {
      await send({ method: 'DELETE', path: rateLimitPath(id, owner) });
    },
    getAlerts: (id) => get(paths.alerts(id)),
    putAlerts: (id, body) => call({ method: 'PUT', path: paths.alerts(id), body }),
    removeAlerts: async (id) => {
      await send({ method: 'DELETE', path: paths.alerts(id) });
    },
  };
}
