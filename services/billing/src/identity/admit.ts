import { costMicroDzd, GatewayError, LIMITS } from '@gateway/contracts';
import type { ChatMediaUse, MediaKind, MediaUse, RateLimitDecision } from '@gateway/contracts';
import { modelNotFound } from './catalog.js';
import { rateLimitError, type RateLimiter } from './rate-limit.js';
import type { IdentityStore } from './store.js';
import { newScopedTokenId } from './secrets.js';
import { systemClock } from './types.js';
import type {
  CatalogModel,
  Clock,
  ModelKind,
  ModelProvider,
  Principal,
  PrincipalToken,
} from './types.js';

/** What admit asks the ledger to reserve. */
export interface PlaceHoldInput {
  /** Caller-chosen hold id (e.g. from the request id), for idempotent retries; passed through. */
  holdId?: string;
  accountId: string;
  amountMicroDzd: bigint;
  model: string;
  /** The catalog prices `amountMicroDzd` was computed with (settlement charges these). */
  prices: { inputMicroDzdPerM: bigint; outputMicroDzdPerM: bigint };
  priority: boolean;
  scopedToken?: { id: string; spendingLimitMicroDzd: bigint | null };
}

export interface PlacedHold {
  id: string;
  amountMicroDzd: bigint;
  expiresAt: Date;
  /** The hold already existed under the caller's id (a retried admission): nothing new. */
  replayed: boolean;
}

/**
 * The ledger's hold placement, injected (the ledger lives elsewhere). It runs inside admit's
 * transaction (`tx`) and throws 402 `budget_exhausted` (token limit) or 402
 * `insufficient_balance` (available balance) as GatewayErrors. With the Prisma store,
 * `Tx` is `Prisma.TransactionClient`.
 */
export type PlaceHold<Tx> = (tx: Tx, input: PlaceHoldInput) => Promise<PlacedHold>;

export interface AdmitRequest {
  principal: Principal;
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
  /** Passed to placeHold as `holdId` when given. */
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
   * Chat content beyond text (issue 21): a kind the model does not declare is refused with 400
   * naming its first part, at the same step; every image adds the model's `imageTokens` to the
   * input of the worst case.
   */
  media?: ChatMediaUse;
}

export interface Admission {
  hold: PlacedHold;
  model: CatalogModel;
  /** The worst case reserved: input + choices × output cap at the model's rates (× 1.2). */
  worstCaseMicroDzd: bigint;
  /** Output tokens the worst case was sized for (all choices). */
  reservedOutputTokens: number;
  /** For the `X-RateLimit-*` headers. */
  rateLimit: RateLimitDecision;
}

type Outcome = { ok: true; admission: Admission } | { ok: false; error: GatewayError };

/**
 * Admission of one inference request, in ONE READ COMMITTED transaction, in the order of the
 * spec's error table as decisions §1 orders it (authentication, suspension, expiry and
 * revocation were decided by `authenticate` before):
 *
 * 1. rate limit → 429 `rate_limit_exceeded`;
 * 2. model in the catalog, and of a provider and kind the endpoint serves → 404 `model_not_found`;
 *    a parameter the model's provider does not accept → 400 `invalid_request_body`;
 * 3. model in the scoped token's list → 403 `model_not_allowed` (the message lists the models);
 * 4. a client-minted scoped token seen for the first time is registered (revoked meanwhile →
 *    401 `token_revoked`), then `placeHold` with the worst-case cost → 402 `budget_exhausted` /
 *    402 `insufficient_balance`; both in one savepoint, so a refusal registers nothing.
 *
 * Every request counts against the rate limit, refused ones included: a refusal after step 1
 * commits the counter (the hold attempt runs in a savepoint, rolled back on refusal) and then
 * throws. Every GatewayError thrown after step 1 carries `details.rateLimit` (the decision), so
 * the HTTP layer can send `X-RateLimit-*` on errors too; 429s also carry `retryAfterS`, `limit`,
 * `remaining`, `resetMs` in `details`. Errors other than GatewayError roll everything back.
 */
export class Admitter<Tx = unknown> {
  readonly #store: IdentityStore<Tx>;
  readonly #rateLimiter: RateLimiter<Tx>;

  readonly #clock: Clock;

  constructor(deps: { store: IdentityStore<Tx>; rateLimiter: RateLimiter<Tx>; clock?: Clock }) {
    this.#store = deps.store;
    this.#rateLimiter = deps.rateLimiter;
    this.#clock = deps.clock ?? systemClock;
  }

  async admit(request: AdmitRequest, deps: { placeHold: PlaceHold<Tx> }): Promise<Admission> {
    const { principal } = request;
    const estimate = checkEstimate(request.estimate);
    if (principal.kind === 'scoped_token' && !principal.token) {
      throw new Error('a scoped_token principal must carry its token');
    }
    const outcome = await this.#store.transaction(async (tx): Promise<Outcome> => {
      const rateLimit = await this.#rateLimiter.consume(
        principal.accountId,
        principal.rateLimitPerMinute,
        tx,
      );
      try {
        if (!rateLimit.allowed) throw rateLimitError(rateLimit);
        const model = await this.#store.findModel(request.model, tx);
        if (!model) throw modelNotFound(request.model);
        if (!servesEndpoint(model, request)) throw modelNotOnEndpoint(model.id);
        const refused = request.nodeUnsupportedParameter;
        if (refused !== undefined && model.provider === 'node') throw unsupportedParameter(refused);
        const media = request.media;
        const refusedKind = media?.kinds.find((use) => !modelReads(model, use.kind));
        if (refusedKind) throw unsupportedContent(model, refusedKind);
        const allowed = principal.token?.models ?? null;
        if (allowed !== null && !allowed.includes(model.id))
          throw modelNotAllowed(model.id, allowed);
        const perChoice = Math.min(
          estimate.maxOutputTokens ?? model.maxOutputTokens,
          model.maxOutputTokens,
        );
        const reservedOutputTokens = perChoice * estimate.choices;
        const worstCaseMicroDzd = costMicroDzd({
          inputTokens: estimate.inputTokens + (media?.imageCount ?? 0) * model.imageTokens,
          outputTokens: reservedOutputTokens,
          inputPriceMicroDzdPerM: model.inputPriceMicroDzdPerM,
          outputPriceMicroDzdPerM: model.outputPriceMicroDzdPerM,
          priority: request.priority,
        });
        const hold = await this.#store.savepoint(tx, async () => {
          // Registered here, with the hold, so a refused request leaves no registry row.
          const token = principal.token && (await this.#tokenRef(principal.token, principal, tx));
          return deps.placeHold(tx, {
            ...(request.holdId === undefined ? {} : { holdId: request.holdId }),
            accountId: principal.accountId,
            amountMicroDzd: worstCaseMicroDzd,
            model: model.id,
            // Settlement charges the prices this amount was computed with.
            prices: {
              inputMicroDzdPerM: model.inputPriceMicroDzdPerM,
              outputMicroDzdPerM: model.outputPriceMicroDzdPerM,
            },
            priority: request.priority,
            ...(token
              ? {
                  scopedToken: { id: token.id, spendingLimitMicroDzd: token.spendingLimitMicroDzd },
                }
              : {}),
          });
        });
        return {
          ok: true,
          admission: { hold, model, worstCaseMicroDzd, reservedOutputTokens, rateLimit },
        };
      } catch (error) {
        if (error instanceof GatewayError)
          return { ok: false, error: withRateLimit(error, rateLimit) };
        throw error;
      }
    });
    if (!outcome.ok) throw outcome.error;
    return outcome.admission;
  }

  /**
   * The registry id and limit of the principal's scoped token: a client-minted token seen for the
   * first time is registered now, in admission's transaction (concurrent first uses register once).
   */
  async #tokenRef(
    token: PrincipalToken,
    principal: Principal,
    tx: Tx,
  ): Promise<{ id: string; spendingLimitMicroDzd: bigint | null }> {
    if (token.id !== null) {
      return { id: token.id, spendingLimitMicroDzd: token.spendingLimitMicroDzd };
    }
    const found = await this.#store.registerScopedToken(
      {
        id: newScopedTokenId(),
        digest: token.digest,
        accountId: principal.accountId,
        apiKeyName: principal.apiKeyName,
        models: token.models,
        expiresAt: token.expiresAt,
        spendingLimitMicroDzd: token.spendingLimitMicroDzd,
        spentMicroDzd: 0n,
        reservedMicroDzd: 0n,
        revokedAt: null,
        origin: 'client',
        createdAt: this.#clock(),
      },
      tx,
    );
    if (found.accountId !== principal.accountId || found.apiKeyName !== principal.apiKeyName) {
      throw new GatewayError('invalid_api_key', 'Scoped token signature is not valid');
    }
    // Revoked between authentication and now.
    if (found.revokedAt !== null) {
      throw new GatewayError('token_revoked', 'Scoped token was revoked by its owner');
    }
    return found;
  }
}

function servesEndpoint(
  model: CatalogModel,
  request: Pick<AdmitRequest, 'providers' | 'kinds'>,
): boolean {
  const { providers, kinds } = request;
  if (providers !== undefined && !providers.includes(model.provider)) return false;
  return kinds === undefined || kinds.includes(model.kind);
}

export const modelNotOnEndpoint = (id: string): GatewayError =>
  new GatewayError('model_not_found', `Model '${id}' is not available on this endpoint`, {
    param: 'model',
  });

export const modelNotAllowed = (id: string, allowed: readonly string[]): GatewayError =>
  new GatewayError(
    'model_not_allowed',
    `Model '${id}' is not allowed for this scoped token. Allowed models: ${allowed.join(', ')}`,
    { param: 'model' },
  );

/** The reference API's wording for an unknown argument. */
export const unsupportedParameter = (name: string): GatewayError =>
  new GatewayError('invalid_request_body', `Unrecognized request argument supplied: ${name}`, {
    param: name,
  });

/** Whether the model declares a kind of content (remote images need `remoteImages` too). */
export function modelReads(
  model: Pick<CatalogModel, 'inputModalities' | 'remoteImages'>,
  kind: MediaKind,
): boolean {
  if (kind === 'remote_image') return model.inputModalities.includes('image') && model.remoteImages;
  return model.inputModalities.includes(kind);
}

/** 400 naming the first part of a kind the model does not read, before any hold. */
export function unsupportedContent(
  model: Pick<CatalogModel, 'id' | 'inputModalities'>,
  use: MediaUse,
): GatewayError {
  const message =
    use.kind === 'remote_image'
      ? `Model '${model.id}' takes images only as data: URLs (data:image/...;base64,...)`
      : `Model '${model.id}' does not take ${use.kind} input; it reads: ` +
        model.inputModalities.join(', ');
  return new GatewayError('invalid_request_body', message, { param: use.param });
}

export function withRateLimit(error: GatewayError, rateLimit: RateLimitDecision): GatewayError {
  return new GatewayError(error.code, error.message, {
    ...(error.param === undefined ? {} : { param: error.param }),
    details: { ...error.details, rateLimit },
    cause: error,
  });
}

export function checkEstimate(estimate: AdmitRequest['estimate']) {
  const bad = (field: string) =>
    new GatewayError('invalid_request_body', `estimate.${field} must be a non-negative integer`, {
      param: field,
    });
  const { inputTokens, maxOutputTokens = null, choices = 1 } = estimate;
  if (!Number.isSafeInteger(inputTokens) || inputTokens < 0) throw bad('inputTokens');
  if (
    maxOutputTokens !== null &&
    (!Number.isSafeInteger(maxOutputTokens) ||
      maxOutputTokens < 0 ||
      maxOutputTokens > LIMITS.tokensMax)
  ) {
    throw bad('maxOutputTokens');
  }
  if (!Number.isSafeInteger(choices) || choices < 1 || choices > LIMITS.nMax) throw bad('choices');
  return { inputTokens, maxOutputTokens, choices };
}
