import type { AnySchemaObject } from 'ajv';
import { describeViolation, lazyValidator, type Validator } from './ajv.js';
import { GatewayError } from './errors.js';
import { dzdToMicroDzd } from './money.js';
import { ChatCompletionRequestSchema, checkChatMessageRules } from './schemas/chat-completion.js';
import type { ChatCompletionRequest } from './schemas/chat-completion.js';
import { LIMITS } from './schemas/limits.js';
import { NativeInferenceRequestSchema } from './schemas/native-inference.js';
import type { NativeInferenceRequest } from './schemas/native-inference.js';
import { ResponsesRequestSchema } from './schemas/responses-request.js';
import type { ResponsesRequest } from './schemas/responses-request.js';
import { ScopedTokenCreateRequestSchema } from './schemas/scoped-token.js';
import type { ScopedTokenCreateRequest } from './schemas/scoped-token.js';

/*
 * Request validation (decisions §3): `missing_model` only for a chat body without a string
 * `model`; every other problem is `invalid_request_body` with `param` naming the field. Ajv stops
 * at the first failure, so the reported error is deterministic: required fields and cross-field
 * rules first, then fields in schema order. Messages name the field and the rule, never the value
 * (prompts and credentials must not be echoed).
 */

const chatCompletionValidator = lazyValidator<ChatCompletionRequest>(ChatCompletionRequestSchema);
const nativeInferenceValidator = lazyValidator<NativeInferenceRequest>(
  NativeInferenceRequestSchema,
);
const responsesValidator = lazyValidator<ResponsesRequest>(ResponsesRequestSchema);
const scopedTokenCreateValidator = lazyValidator<ScopedTokenCreateRequest>(
  ScopedTokenCreateRequestSchema,
);

/**
 * Compiles the public API's request validators now (edge, at start): its first requests then
 * do not wait for them (the chat request's takes about 0.12 s).
 */
export function warmRequestValidators(): void {
  for (const validator of [
    chatCompletionValidator,
    nativeInferenceValidator,
    responsesValidator,
    scopedTokenCreateValidator,
  ]) {
    validator.warm();
  }
}

function invalid(message: string, param: string | undefined): GatewayError {
  return new GatewayError('invalid_request_body', message, param === undefined ? {} : { param });
}

function check<T>(validator: Validator<T>, body: unknown): T {
  // Checked first: object-level rules such as "exactly one of input/inputs" hold vacuously for
  // non-objects, so Ajv's first error would otherwise be misleading.
  if (!isPlainObject(body)) throw invalid('request body must be a JSON object', undefined);
  if (validator(body)) return body;
  const { param, message } = describeViolation(validator.errors ?? []);
  throw invalid(message, param);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A validator for any other JSON body schema (e.g. the operator API's), with the same error
 * mapping: the schema is compiled once, on the first body it checks.
 */
export function createBodyValidator<T>(schema: AnySchemaObject): (body: unknown) => T {
  const validator = lazyValidator<T>(schema);
  return (body) => check(validator, body);
}

/** A chat or Responses body: a JSON object with a string `model`, else `missing_model`. */
function requireModel(body: unknown): asserts body is Record<string, unknown> {
  if (!isPlainObject(body)) {
    throw new GatewayError('missing_model', 'request body must be a JSON object with a model', {
      param: 'model',
    });
  }
  if (!Object.hasOwn(body, 'model')) {
    throw new GatewayError('missing_model', 'model is required', { param: 'model' });
  }
  if (typeof body.model !== 'string') {
    throw new GatewayError('missing_model', 'model must be a string', { param: 'model' });
  }
}

export function validateChatCompletion(body: unknown): ChatCompletionRequest {
  requireModel(body);
  const request = check(chatCompletionValidator, body);
  checkChatMessageRules(request.messages);
  return request;
}

/**
 * `POST /v1/responses`. A top-level `null` means "not set" (the SDKs send `null` for fields left
 * at their default), so it is dropped before the schema sees the body.
 */
export function validateResponses(body: unknown): ResponsesRequest {
  requireModel(body);
  const set = Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null));
  return check(responsesValidator, set);
}

export function validateNativeInference(body: unknown): NativeInferenceRequest {
  return check(nativeInferenceValidator, body);
}

export interface ScopedTokenValidationOptions {
  /** Current unix time in seconds; when given, `expires_at` must lie in (now, now + 1 year]. */
  nowS?: number;
}

export function validateScopedTokenCreate(
  body: unknown,
  options: ScopedTokenValidationOptions = {},
): ScopedTokenCreateRequest {
  const request = check(scopedTokenCreateValidator, body);
  if (request.spending_limit !== undefined) {
    try {
      dzdToMicroDzd(request.spending_limit);
    } catch {
      throw invalid('spending_limit must have at most 6 decimal places', 'spending_limit');
    }
  }
  const { nowS } = options;
  if (nowS !== undefined && request.expires_at !== undefined) {
    if (request.expires_at <= nowS) {
      throw invalid('expires_at must be in the future', 'expires_at');
    }
    if (request.expires_at > nowS + LIMITS.scopedTokenMaxLifetimeS) {
      throw invalid(
        `expires_at must be at most ${LIMITS.scopedTokenMaxLifetimeS} seconds (1 year) ahead`,
        'expires_at',
      );
    }
  }
  return request;
}

/** The token's `exp` (unix seconds): `expires_at`, else now + `expires_delta`, else now + 1 year. */
export function scopedTokenExpiryS(request: ScopedTokenCreateRequest, nowS: number): number {
  return request.expires_at ?? nowS + (request.expires_delta ?? LIMITS.scopedTokenMaxLifetimeS);
}
