import { errorFromAnswer } from '@gateway/billing-client';
import { GatewayError } from '@gateway/contracts';
import type { InternalRequest } from '@gateway/runtime';
import type { EdgeDeps } from '../deps.js';

/**
 * An operator-API call to billing on the dashboard's behalf (the same operations `/admin/v1`
 * passes through): the JSON answer, or the refusal thrown as billing decided it.
 */
export async function adminCall<T>(deps: EdgeDeps, request: InternalRequest): Promise<T> {
  const answer = await deps.billing.forwardAdmin(request);
  if (answer.status === 401) {
    throw new GatewayError('internal_error', 'Gateway configuration error (billing credential)');
  }
  if (answer.status >= 400) throw errorFromAnswer('billing', answer);
  return (answer.body.length === 0 ? {} : JSON.parse(answer.body.toString('utf8'))) as T;
}
