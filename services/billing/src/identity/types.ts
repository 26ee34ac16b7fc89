import type { ChatMediaUse, InputModality, RateLimitDecision } from '@gateway/contracts';
/**
 * Domain types of billing's identity part: accounts, API keys, scoped tokens, the model catalog,
 * rate-limit state, and admission's request and answer. Framework-free: no Express and no Prisma
 * types here (the repositories map their rows to these).
 */

import {
  MODEL_KINDS,
  MODEL_PROVIDERS,
  NODE_PROTOCOLS,
  type ModelKind,
  type ModelProvider,
  type NodeProtocol,
} from '@gateway/contracts';
import type { SealedValue } from '@gateway/crypto';

/** The current time. Injected everywhere a decision depends on time, so tests can move it. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

export type AccountStatus = 'active' | 'suspended';
export type WebhookFormat = 'A' | 'B';

export interface Account {
  /** Public user id: `usr_` + 20 lowercase base32 characters. */
  id: string;
  name: string;
  status: AccountStatus;
  rateLimitPerMinute: number;
  webhookFormat: WebhookFormat;
  createdAt: Date;
}

/** An AES-256-GCM sealed secret with the MASTER_KEY version that sealed it, as stored. */
export type SealedSecret = SealedValue;

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  /** SHA-256 of the raw key, lowercase hex. */
  keyDigest: string;
  /** The raw key, sealed (it is the HS256 secret of the key's scoped tokens). */
  secret: SealedSecret;
  createdAt: Date;
}

/** What an operator or dashboard may see of a key: never the key or its secret. */
export interface ApiKeySummary {
  name: string;
  createdAt: Date;
  /** Approximate (written at most once a minute per key); null: never used. */
  lastUsedAt: Date | null;
}

export type TokenOrigin = 'issued' | 'client';

export interface ScopedTokenRecord {
  id: string;
  /** SHA-256 of the full token string (`jwt:...`), lowercase hex. */
  digest: string;
  accountId: string;
  apiKeyName: string;
  /** Allowed models; null = any model. */
  models: string[] | null;
  expiresAt: Date;
  /** null = no limit. */
  spendingLimitMicroDzd: bigint | null;
  spentMicroDzd: bigint;
  reservedMicroDzd: bigint;
  revokedAt: Date | null;
  origin: TokenOrigin;
  createdAt: Date;
}

// Model kinds, providers and protocols are a contract shared with edge and the worker: defined
// once in contracts.
export { MODEL_KINDS, MODEL_PROVIDERS, NODE_PROTOCOLS };
export type { ModelKind, ModelProvider, NodeProtocol };

export interface ModelNode {
  /** http:// or https:// base address of a model server. */
  url: string;
  /** Relative routing weight; 1 when omitted. */
  weight?: number;
}

export interface ModelRecord {
  /** Public model id; may contain '/'. */
  id: string;
  kind: ModelKind;
  provider: ModelProvider;
  protocol: NodeProtocol;
  upstreamModel: string;
  inputPriceMicroDzdPerM: bigint;
  outputPriceMicroDzdPerM: bigint;
  maxOutputTokens: number;
  nodes: ModelNode[];
  /** What the model reads besides text; always includes `text`. */
  inputModalities: InputModality[];
  /** The hold's token ceiling per image part. */
  imageTokens: number;
  /** Whether image parts may be remote http(s) URLs, which the model's nodes fetch. */
  remoteImages: boolean;
  updatedAt: Date;
}

/** The authenticated caller, as `authenticate` returns it. */
export interface Principal {
  accountId: string;
  kind: 'api_key' | 'scoped_token';
  /** The API key used, or the key that signed the scoped token (usage is counted against it). */
  apiKeyName: string;
  /** Present exactly when kind is 'scoped_token'. */
  token?: PrincipalToken;
  rateLimitPerMinute: number;
  webhookFormat: WebhookFormat;
}

export interface PrincipalToken {
  /**
   * Registry id (`tok_...`), for holds and spend accounting; null for a client-minted token not
   * registered yet: admission registers it with its first hold (a refused request writes nothing).
   */
  id: string | null;
  /** SHA-256 of the token: the registry key admission registers it under. */
  digest: string;
  /** null = any model. */
  models: string[] | null;
  /** null = no limit. */
  spendingLimitMicroDzd: bigint | null;
  expiresAt: Date;
}

// --- admission (admission.ts): what an inference request asks, and what it gets

/** The hold admission placed. */
export interface PlacedHold {
  id: string;
  amountMicroDzd: bigint;
  expiresAt: Date;
  /** The hold already existed under the caller's id (a retried admission): nothing new. */
  replayed: boolean;
}

/** What an inference request asks of admission (the credential travels beside it). */
export interface AdmitRequest {
  /** Catalog model id, as the client wrote it. */
  model: string;
  estimate: {
    /** Prompt tokens, counted with a real tokenizer. */
    inputTokens: number;
    /**
     * Output cap per choice requested by the client (`max_tokens`, `max_new_tokens`...).
     * Omitted/null: the model's `max_output_tokens`. Never more than the model's cap.
     */
    maxOutputTokens?: number | null;
    /** Choices generated (`n`); 1 by default. The output cap is reserved for each. */
    choices?: number;
  };
  /** `service_tier: "priority"`: +20%. */
  priority: boolean;
  /** The hold's id, caller-chosen (e.g. from the request id) for idempotent retries. */
  holdId?: string;
  /**
   * Providers the calling endpoint may use (e.g. `['node']` on the default-models-only routes);
   * any when omitted. A model of another provider is 404 `model_not_found`, decided at the model
   * step, so no hold is placed.
   */
  providers?: readonly ModelProvider[];
  /** Model kinds the calling endpoint serves (e.g. `['embedding']`); any when omitted. */
  kinds?: readonly ModelKind[];
  /**
   * The first (sorted) request parameter default models do not accept, as edge found it: a model
   * of provider `node` is then refused with 400 `invalid_request_body` naming it, before the
   * token's model list and the hold. External-provider models drop such parameters with a warning.
   */
  nodeUnsupportedParameter?: string;
  /**
   * Chat content beyond text: a kind the model does not declare is refused with 400
   * naming its first part, at the same step; every image adds the model's `imageTokens` to the
   * input of the worst case.
   */
  media?: ChatMediaUse;
}

export interface Admission {
  hold: PlacedHold;
  model: ModelRecord;
  /** The worst case reserved: input + choices × output cap at the model's rates (× 1.2). */
  worstCaseMicroDzd: bigint;
  /** Output tokens the worst case was sized for (all choices). */
  reservedOutputTokens: number;
  /** For the `X-RateLimit-*` headers. */
  rateLimit: RateLimitDecision;
}
