import { microDzdFromWire, modelIdPath, pathSegment } from '@gateway/contracts';
import { createInternalHttp, jsonOf } from './internal-http.js';
import type { InternalHttp, InternalRequest, InternalResponse } from './internal-http.js';
import { errorFromAnswer } from './wire-errors.js';
import type {
  Admission,
  AdmitRequest,
  CatalogEntry,
  IdempotencyClaim,
  IdempotencyRef,
  Principal,
  RateLimit,
  StoredResponse,
} from './billing-types.js';

/**
 * Typed client of billing's internal API (services/billing/README.md, "Internal API"). Every
 * refusal comes back as the GatewayError billing decided, with its rate-limit details.
 */
export interface BillingClient {
  authenticate(authorization: string | undefined): Promise<Principal>;
  /** Counts one request against the account's limit; 429 when over it. */
  rateLimit(principal: Principal): Promise<RateLimit>;
  admit(request: AdmitRequest): Promise<Admission>;
  /** Idempotent; a hold the worker already finalised is not an error. */
  voidHold(holdId: string): Promise<void>;
  balance(accountId: string): Promise<unknown>;
  createScopedToken(accountId: string, body: unknown): Promise<{ token: string }>;
  inspectScopedToken(accountId: string, token: string): Promise<unknown>;
  revokeScopedToken(accountId: string, token: string): Promise<unknown>;
  listModels(): Promise<CatalogEntry[]>;
  getModel(id: string): Promise<CatalogEntry>;
  claimIdempotencyKey(ref: IdempotencyRef, leaseMs: number): Promise<IdempotencyClaim>;
  completeIdempotencyKey(ref: IdempotencyRef, response: StoredResponse): Promise<void>;
  releaseIdempotencyKey(ref: IdempotencyRef): Promise<void>;
  /** The operator API, passed through: billing's answer as it is. */
  forwardAdmin(request: InternalRequest): Promise<InternalResponse>;
}

export interface BillingClientOptions {
  baseUrl: string;
  token: string;
  timeoutMs: number;
}

const API = '/internal/v1';

export function createBillingClient(options: BillingClientOptions): BillingClient {
  const http = createInternalHttp({ service: 'billing', ...options });
  const call = <T>(request: InternalRequest) => callJson<T>(http, request);
  const post = <T>(path: string, body: unknown, retry = false) =>
    call<T>({ method: 'POST', path: `${API}${path}`, body, retry });
  const get = <T>(path: string) => call<T>({ method: 'GET', path: `${API}${path}`, retry: true });
  const account = (id: string) => `/accounts/${pathSegment(id)}`;

  return {
    authenticate: async (authorization) =>
      (await post<{ principal: Principal }>('/authenticate', { authorization }, true)).principal,
    rateLimit: async (principal) =>
      (await post<{ rateLimit: RateLimit }>('/rate-limit', { principal })).rateLimit,
    admit: async (request) => admissionFromWire(await post<WireAdmission>('/admit', request)),
    voidHold: async (holdId) => {
      try {
        await post(`/holds/${pathSegment(holdId)}/void`, undefined, true);
      } catch (error) {
        // 409: the worker settled or voided it first; whoever finalises first wins.
        if ((error as { code?: unknown }).code !== 'conflict') throw error;
      }
    },
    balance: (accountId) => get(`${account(accountId)}/balance`),
    createScopedToken: (accountId, body) => post(`${account(accountId)}/scoped-tokens`, body),
    inspectScopedToken: (accountId, token) =>
      post(`${account(accountId)}/scoped-tokens/inspect`, { token }, true),
    revokeScopedToken: (accountId, token) =>
      post(`${account(accountId)}/scoped-tokens/revoke`, { token }, true),
    listModels: async () => (await get<{ models: CatalogEntry[] }>('/models')).models,
    getModel: (id) => get(`/models/${modelIdPath(id)}`),
    claimIdempotencyKey: (ref, leaseMs) => post('/idempotency/claim', { ...ref, leaseMs }),
    completeIdempotencyKey: async (ref, response) => {
      await post('/idempotency/complete', { ...ref, response });
    },
    releaseIdempotencyKey: async (ref) => {
      await post('/idempotency/release', ref, true);
    },
    forwardAdmin: (request) => http({ ...request, path: `${API}/admin${request.path}` }),
  };
}

async function callJson<T>(http: InternalHttp, request: InternalRequest): Promise<T> {
  const response = await http(request);
  if (response.status >= 400) throw errorFromAnswer('billing', response);
  return jsonOf<T>(response);
}

interface WireAdmission {
  hold: { id: string; amountMicroDzd: string };
  model: { id: string; kind: Admission['model']['kind']; provider: Admission['model']['provider'] };
  rateLimit: RateLimit;
}

function admissionFromWire(wire: WireAdmission): Admission {
  return {
    holdId: wire.hold.id,
    holdAmountMicroDzd: microDzdFromWire(wire.hold.amountMicroDzd),
    model: { id: wire.model.id, kind: wire.model.kind, provider: wire.model.provider },
    rateLimit: wire.rateLimit,
  };
}
