import { GatewayError, createBodyValidator } from '@gateway/contracts';
import type { TSchema } from '@sinclair/typebox';

/**
 * A validator for a body with a `model` field, with the chat endpoint's rule (decisions §3):
 * a body that is not an object, or whose `model` is absent or not a string, is 400
 * `missing_model`; every other problem is 400 `invalid_request_body` naming the field.
 */
export function modelBodyValidator<T>(schema: TSchema): (body: unknown) => T {
  const validate = createBodyValidator<T>(schema);
  return (body) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new GatewayError('missing_model', 'request body must be a JSON object with a model', {
        param: 'model',
      });
    }
    const model = (body as { model?: unknown }).model;
    if (typeof model !== 'string') {
      const message = model === undefined ? 'model is required' : 'model must be a string';
      throw new GatewayError('missing_model', message, { param: 'model' });
    }
    return validate(body);
  };
}
