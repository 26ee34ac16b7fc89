/**
 * Admission's domain types, read from the admission function's row wherever a request is
 * admitted (billing; edge for API keys, ADR 0070): the catalog's model as admission sees it, the
 * caller, what an inference request asks and what it gets. Framework-free.
 */
import type {
  ChatMediaUse,
  InputModality,
  ModelKind,
  ModelProvider,
  NodeProtocol,
  RateLimitDecision,
} from '@gateway/contracts';

export type WebhookFormat = 'A' | 'B';

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

/**
 * The request without a principal: admission authenticates the credential itself. `endpoint`
 * and `requestId` are kept on the hold for the request's usage record.
 */
export type CredentialAdmitRequest = AdmitRequest & {
  endpoint?: string;
  requestId?: string;
};

/** A request ready for the statement: its hold id chosen, its estimate checked. */
export type CheckedAdmitRequest = CredentialAdmitRequest & {
  holdId: string;
  estimate: { inputTokens: number; maxOutputTokens: number | null; choices: number };
};

/** How long a hold placed at admission lives unless its job is published (billing's default). */
export const DEFAULT_HOLD_TTL_MS = 15 * 60_000;
