/**
 * The refusals of stored Responses state. A 404 names the id that failed and never anything of
 * a response's content; unknown, expired, deleted, another account's and another reader's are
 * the same answer, so a caller learns nothing about rows it may not read.
 */
import { GatewayError } from '@gateway/contracts';

/** No response `id` this reader may read. `param`: the request field that named it. */
export const responseNotFound = (id: string, param?: string): GatewayError =>
  new GatewayError('response_not_found', `No stored response ${id}`, paramOf(param));

/** No stored item `itemId` this reader may read (an `item_reference` of the request's input). */
export const itemNotFound = (itemId: string): GatewayError =>
  new GatewayError('response_not_found', `No stored item ${itemId}`, { param: 'input' });

/** A field of what edge sent is out of bounds: edge's mistake or a client's oversized request. */
export const invalidResponseBody = (message: string, param: string): GatewayError =>
  new GatewayError('invalid_request_body', message, { param });

const paramOf = (param: string | undefined) => (param === undefined ? {} : { param });
