import { errorFromAnswer } from '@gateway/billing-client';
import { GatewayError } from '@gateway/contracts';
import type { InternalRequest, InternalResponse } from '@gateway/runtime';
import type { EdgeDeps } from '../deps.js';

type Target = 'billing' | 'dispatcher';

/** A refusal of the dependency, thrown as it decided it (its credential refused: our fault). */
export function throwIfRefused(target: Target, answer: InternalResponse): void {
  if (answer.status === 401) {
    throw new GatewayError('internal_error', `Gateway configuration error (${target} credential)`);
  }
  if (answer.status >= 400) throw errorFromAnswer(target, answer);
}

/** The JSON answer (empty object without a body), or the refusal thrown. */
function answerOf<T>(target: Target, answer: InternalResponse): T {
  throwIfRefused(target, answer);
  return (answer.body.length === 0 ? {} : JSON.parse(answer.body.toString('utf8'))) as T;
}

/**
 * An operator-API call to billing on the dashboard's behalf (the same operations `/admin/v1`
 * passes through): the JSON answer, or the refusal thrown as billing decided it.
 */
export async function adminCall<T>(deps: EdgeDeps, request: InternalRequest): Promise<T> {
  return answerOf<T>('billing', await deps.billing.forwardAdmin(request));
}

/** A call to the dispatcher's internal API (webhook secrets and deliveries), likewise. */
export async function dispatcherCall<T>(deps: EdgeDeps, request: InternalRequest): Promise<T> {
  return answerOf<T>('dispatcher', await deps.dispatcher.forward(request));
}
