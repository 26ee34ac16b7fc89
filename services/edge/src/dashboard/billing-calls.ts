import { credentialRefused, errorFromAnswer } from '@gateway/billing-client';
import { jsonOf, type InternalRequest, type InternalResponse } from '@gateway/runtime';
import type { Response } from 'express';
import type { ConsoleDeps } from '../deps.js';

type Target = 'billing' | 'dispatcher';

/** A refusal of the dependency, thrown as it decided it (its credential refused: our fault). */
export function throwIfRefused(target: Target, answer: InternalResponse): void {
  if (answer.status === 401) throw credentialRefused(target);
  if (answer.status >= 400) throw errorFromAnswer(target, answer);
}

/** The JSON answer (empty object without a body), or the refusal thrown. */
function answerOf<T>(target: Target, answer: InternalResponse): T {
  throwIfRefused(target, answer);
  return jsonOf<T>(answer);
}

/**
 * An operator-API call to billing on the dashboard's behalf (the same operations `/admin/v1`
 * passes through): the JSON answer, or the refusal thrown as billing decided it.
 */
export async function adminCall<T>(deps: ConsoleDeps, request: InternalRequest): Promise<T> {
  return answerOf<T>('billing', await deps.billing.forwardAdmin(request));
}

/** A call to the dispatcher's internal API (webhook secrets and deliveries), likewise. */
export async function dispatcherCall<T>(deps: ConsoleDeps, request: InternalRequest): Promise<T> {
  return answerOf<T>('dispatcher', await deps.dispatcher.forward(request));
}

/** A CSV download: the attachment `<name>.csv` (`res.attachment` sets the type from the name). */
export function sendCsv(res: Response, name: string, csv: string | Buffer): void {
  res.type('text/csv').attachment(`${name}.csv`).send(csv);
}

/**
 * An operator-API CSV answer passed through (`GET` with `Accept: text/csv`): the refusal thrown
 * as billing decided it, else its body sent as the attachment `<name>.csv`.
 */
export async function sendAdminCsv(
  deps: ConsoleDeps,
  res: Response,
  path: string,
  name: string,
): Promise<void> {
  const answer = await deps.billing.forwardAdmin({
    method: 'GET',
    path,
    headers: { Accept: 'text/csv' },
  });
  throwIfRefused('billing', answer);
  sendCsv(res, name, answer.body);
}
