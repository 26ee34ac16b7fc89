import { describe, expect, it } from '@jest/globals';
import { compile } from './ajv.js';
import {
  ERROR_CATALOG,
  ERROR_CODES,
  ErrorBodySchema,
  GatewayError,
  errorBody,
  gatewayErrorFromWire,
  isErrorCode,
  toErrorBody,
} from './errors.js';
import type { ErrorCode } from './errors.js';

const validateErrorBody = compile(ErrorBodySchema);

describe('error catalog', () => {
  it.each<[ErrorCode, number, boolean]>([
    // The spec's table.
    ['missing_model', 400, false],
    ['invalid_request_body', 400, false],
    ['invalid_api_key', 401, false],
    ['token_expired', 401, false],
    ['token_revoked', 401, false],
    ['insufficient_balance', 402, false],
    ['budget_exhausted', 402, false],
    ['account_suspended', 403, false],
    ['model_not_allowed', 403, false],
    ['model_not_found', 404, true],
    ['rate_limit_exceeded', 429, true],
    ['GATEWAY_TIMEOUT', 500, true],
    // Beyond the table.
    ['not_found', 404, false],
    ['method_not_allowed', 405, false],
    ['idempotency_key_conflict', 409, false],
    ['payload_too_large', 413, false],
    ['unsupported_media_type', 415, false],
    ['unauthorized', 401, false],
    ['resource_not_found', 404, false],
    ['response_not_found', 404, false],
    ['conflict', 409, false],
    ['service_unavailable', 503, true],
    ['internal_error', 500, true],
  ])('%s → %i, retryable %s', (code, status, retryable) => {
    const error = new GatewayError(code, 'm');
    expect(error.status).toBe(status);
    expect(error.retryable).toBe(retryable);
    expect(ERROR_CATALOG[code].description.length).toBeGreaterThan(0);
  });

  it('has exactly the documented codes', () => {
    expect(ERROR_CODES).toHaveLength(30);
  });

  it('isErrorCode accepts catalog codes only', () => {
    expect(isErrorCode('missing_model')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode('gateway_timeout')).toBe(false);
    expect(isErrorCode(400)).toBe(false);
  });
});

describe('GatewayError', () => {
  it('carries code, message, param, details and cause', () => {
    const cause = new Error('root');
    const error = new GatewayError('rate_limit_exceeded', 'slow down', {
      param: 'model',
      details: { retryAfterS: 7 },
      cause,
    });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('GatewayError');
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.message).toBe('slow down');
    expect(error.param).toBe('model');
    expect(error.details?.retryAfterS).toBe(7);
    expect(error.cause).toBe(cause);
  });

  it('leaves param and details undefined by default', () => {
    const error = new GatewayError('internal_error', 'x');
    expect(error.param).toBeUndefined();
    expect(error.details).toBeUndefined();
  });
});

describe('error body', () => {
  it('omits the param key when undefined', () => {
    const body = errorBody('invalid_api_key', 'bad key');
    expect(body).toEqual({
      error: { message: 'bad key', type: 'service_error', code: 'invalid_api_key' },
    });
    expect('param' in body.error).toBe(false);
  });

  it('includes param when given', () => {
    expect(errorBody('invalid_request_body', 'm', 'temperature').error.param).toBe('temperature');
  });

  it('toErrorBody renders a GatewayError', () => {
    const body = toErrorBody(
      new GatewayError('missing_model', 'model is required', { param: 'model' }),
    );
    expect(body).toEqual({
      error: {
        message: 'model is required',
        type: 'service_error',
        code: 'missing_model',
        param: 'model',
      },
    });
  });

  it.each(ERROR_CODES)('matches ErrorBodySchema for %s', (code) => {
    expect(validateErrorBody(errorBody(code, 'm'))).toBe(true);
    expect(validateErrorBody(errorBody(code, 'm', 'p'))).toBe(true);
  });

  it('ErrorBodySchema rejects unknown codes and other types', () => {
    expect(
      validateErrorBody({ error: { message: 'm', type: 'service_error', code: 'nope' } }),
    ).toBe(false);
    expect(
      validateErrorBody({ error: { message: 'm', type: 'other', code: 'missing_model' } }),
    ).toBe(false);
  });
});

describe('gatewayErrorFromWire', () => {
  it('keeps a known code, message and param', () => {
    const error = gatewayErrorFromWire({ code: 'GATEWAY_TIMEOUT', message: 'node timed out' });
    expect(error.code).toBe('GATEWAY_TIMEOUT');
    expect(error.message).toBe('node timed out');
    expect(gatewayErrorFromWire({ code: 'x', message: 'y', param: 'p' }).param).toBeUndefined();
    expect(
      gatewayErrorFromWire({ code: 'invalid_request_body', message: 'y', param: 'p' }).param,
    ).toBe('p');
  });

  it('maps an unknown code to internal_error without its message', () => {
    const error = gatewayErrorFromWire({ code: 'brand_new_code', message: 'secret detail' });
    expect(error.code).toBe('internal_error');
    expect(error.message).not.toContain('secret');
  });
});
