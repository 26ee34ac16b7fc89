import type { ModelKind } from '@gateway/contracts';

/** The account rate-limit decision billing made for one request. */
export interface RateLimit {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix ms when the window resets. */
  resetMs: number;
  retryAfterS: number;
}

/**
 * The authenticated caller as billing's `/authenticate` returns it. Edge reads a few fields and
 * hands the whole object back to billing (`/admit`, `/rate-limit`) unchanged.
 */
export interface Principal {
  accountId: string;
  kind: 'api_key' | 'scoped_token';
  apiKeyName: string;
  rateLimitPerMinute: number;
  webhookFormat: 'A' | 'B';
  /** `id` is null for a client-minted token that billing has not registered yet. */
  token?: { id: string | null; models: string[] | null; [field: string]: unknown };
  [field: string]: unknown;
}

export type ModelProvider = 'node' | 'external';

export interface AdmitRequest {
  principal: Principal;
  model: string;
  estimate: { inputTokens: number; maxOutputTokens: number | null; choices: number };
  priority: boolean;
  /** Default-models-only routes: `['node']`. */
  providers?: ModelProvider[];
  kinds?: ModelKind[];
  /** Chat: the first parameter a node model refuses (billing answers 400 for node models). */
  nodeUnsupportedParameter?: string;
}

export interface Admission {
  holdId: string;
  holdAmountMicroDzd: bigint;
  model: { id: string; kind: ModelKind; provider: ModelProvider };
  rateLimit: RateLimit;
}

export interface CatalogEntry {
  id: string;
  kind: ModelKind;
  provider: ModelProvider;
  updatedAt: string;
}

/** A response stored for an Idempotency-Key, replayed byte for byte. */
export interface StoredResponse {
  status: number;
  contentType: string;
  body: string;
  encoding: 'utf8' | 'base64';
}

export interface IdempotencyRef {
  accountId: string;
  key: string;
  requestHash: string;
}

export type IdempotencyClaim =
  { outcome: 'claimed' } | { outcome: 'replay'; response: StoredResponse };
