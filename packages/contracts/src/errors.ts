import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';

/**
 * The error catalog. Codes are a public, stable contract: clients branch on them, so a code is
 * never renamed or re-purposed, and its status and retryable flag never change.
 *
 * The first block is the spec's error table verbatim (including its odd upper-case
 * `GATEWAY_TIMEOUT`). Decisions §3 adds `invalid_request_body` as the 400 for everything except a
 * missing/non-string `model`. The second block holds codes the product needs beyond the table.
 */
export const ERROR_CATALOG = {
  missing_model: {
    status: 400,
    retryable: false,
    description: '`model` is missing or not a string (or the body is not a JSON object).',
  },
  invalid_request_body: {
    status: 400,
    retryable: false,
    description:
      'Body is not valid JSON, or a field has a bad type, an out-of-range or unsupported value.',
  },
  invalid_api_key: {
    status: 401,
    retryable: false,
    description: 'Authorization header missing, scheme not Bearer, or key unknown/deleted/rotated.',
  },
  token_expired: { status: 401, retryable: false, description: 'Scoped token is past its `exp`.' },
  token_revoked: { status: 401, retryable: false, description: 'Scoped token was revoked.' },
  insufficient_balance: {
    status: 402,
    retryable: false,
    description: 'Available balance is zero or below the worst-case cost of the request.',
  },
  budget_exhausted: {
    status: 402,
    retryable: false,
    description:
      "A scoped token's lifetime spending limit, or a key's or token's budget for its window, " +
      'has no room for the worst-case cost of the request.',
  },
  account_suspended: { status: 403, retryable: false, description: 'Account is suspended.' },
  model_not_allowed: {
    status: 403,
    retryable: false,
    description: "Model is outside the scoped token's model list.",
  },
  model_not_found: {
    status: 404,
    retryable: true,
    description: 'Model is not in the catalog or is unavailable. Retry once if it is catalogued.',
  },
  rate_limit_exceeded: {
    status: 429,
    retryable: true,
    description: 'Account rate limit reached, or the model is at capacity.',
  },
  GATEWAY_TIMEOUT: {
    status: 500,
    retryable: true,
    description: 'Node timeout, unexpected upstream response, or transient network failure.',
  },

  // --- Beyond the spec's table ---
  not_found: { status: 404, retryable: false, description: 'No such route.' },
  method_not_allowed: {
    status: 405,
    retryable: false,
    description: 'The route exists but not for this HTTP method.',
  },
  idempotency_key_conflict: {
    status: 409,
    retryable: false,
    description: 'Idempotency-Key reused with a different request body (decisions §3).',
  },
  payload_too_large: {
    status: 413,
    retryable: false,
    description: 'Request body exceeds the size limit.',
  },
  unsupported_media_type: {
    status: 415,
    retryable: false,
    description: 'Body is not `application/json` (or uses an unsupported encoding/charset).',
  },
  unauthorized: {
    status: 401,
    retryable: false,
    description: 'Missing or bad internal-service or operator (admin) credential.',
  },
  forbidden: {
    status: 403,
    retryable: false,
    description:
      'Internal API: this service credential may not call this operation; dashboard: the ' +
      'user’s role may not (finance reads only).',
  },
  request_timeout: {
    status: 408,
    retryable: true,
    description: 'The request (headers or body) did not arrive in time.',
  },
  request_header_fields_too_large: {
    status: 431,
    retryable: false,
    description: 'Request line or headers (URL and query string included) exceed the size limit.',
  },
  resource_not_found: {
    status: 404,
    retryable: false,
    description: 'Operator API: unknown account, API key, model or other resource.',
  },
  conflict: {
    status: 409,
    retryable: false,
    description: 'Operator API: the resource already exists or is in a conflicting state.',
  },
  service_unavailable: {
    status: 503,
    retryable: true,
    description: 'A dependency (database, broker, billing) is unavailable or shutting down.',
  },
  invalid_credentials: {
    status: 401,
    retryable: false,
    description: 'Dashboard sign-in: wrong email or password (the same whether the email exists).',
  },
  session_required: {
    status: 401,
    retryable: false,
    description: 'Dashboard: no session, or it expired or was signed out.',
  },
  csrf_failed: {
    status: 403,
    retryable: false,
    description:
      'Dashboard: a state change without the session’s CSRF token or from another origin.',
  },
  invalid_invitation: {
    status: 400,
    retryable: false,
    description: 'Dashboard: the invitation is unknown, already used or expired.',
  },
  response_not_found: {
    status: 404,
    retryable: false,
    description:
      'Responses API: no stored response or item with this id for this credential (unknown, ' +
      'deleted, expired, not stored, or another account’s: the same answer).',
  },
  internal_error: {
    status: 500,
    retryable: true,
    description: 'Unexpected gateway fault; nothing was charged that was not also settled.',
  },
} as const satisfies Record<string, { status: number; retryable: boolean; description: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CATALOG, value);
}

/** Extra data for the HTTP layer; never rendered in the body. */
export interface GatewayErrorDetails {
  /** Seconds for the `Retry-After` header (429, 503). */
  retryAfterS?: number;
  [key: string]: unknown;
}

export interface GatewayErrorOptions {
  param?: string;
  details?: GatewayErrorDetails;
  cause?: unknown;
}

/** The one error type every service throws for a client-visible failure. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly details: GatewayErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.param = options.param;
    this.details = options.details;
  }

  get status(): number {
    return ERROR_CATALOG[this.code].status;
  }

  get retryable(): boolean {
    return ERROR_CATALOG[this.code].retryable;
  }
}

export const ErrorBodySchema = Type.Object(
  {
    error: Type.Object(
      {
        message: Type.String({ description: 'Human-readable; clients must not branch on it.' }),
        type: Type.Literal('service_error'),
        code: Type.Unsafe<ErrorCode>({
          type: 'string',
          enum: ERROR_CODES,
          description: 'Machine-readable, stable error code.',
        }),
        param: Type.Optional(
          Type.String({ description: 'The offending request field, e.g. `messages[0].role`.' }),
        ),
      },
      { additionalProperties: false },
    ),
  },
  {
    $id: 'ErrorBody',
    additionalProperties: false,
    description: 'Every gateway error, on every route and as the SSE error event.',
  },
);

export type ErrorBody = Static<typeof ErrorBodySchema>;

export function errorBody(code: ErrorCode, message: string, param?: string): ErrorBody {
  const error: ErrorBody['error'] = { message, type: 'service_error', code };
  if (param !== undefined) error.param = param;
  return { error };
}

export function toErrorBody(err: GatewayError): ErrorBody {
  return errorBody(err.code, err.message, err.param);
}

/**
 * Rebuilds a GatewayError from `{code, message}` received over the wire (queue replies, internal
 * HTTP). An unknown code, e.g. from a newer service version, becomes `internal_error` rather than
 * an unmapped status.
 */
export function gatewayErrorFromWire(error: {
  code: string;
  message: string;
  param?: string;
}): GatewayError {
  const param = error.param === undefined ? {} : { param: error.param };
  return isErrorCode(error.code)
    ? new GatewayError(error.code, error.message, param)
    : new GatewayError('internal_error', 'Internal error');
}
