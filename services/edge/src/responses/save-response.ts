/*
 * Saving a response for later turns. The answer has been paid for when this runs, so a failed
 * save does not fail the request: the client gets its answer marked `store: false`, with a
 * warning, and a later `previous_response_id` to it is the ordinary 404.
 */
import type { BillingClient } from '@gateway/billing-client';
import type { Caller, ResponseItemRecord } from '@gateway/contracts';
import type { Logger } from '@gateway/observability';
import type { ResponseShell } from './response-object.js';

type Json = Record<string, unknown>;

export const NOT_STORED_WARNING = 'response_not_stored: saving it failed; it cannot be continued';

export async function saveResponse(
  billing: BillingClient,
  log: Logger,
  record: {
    caller: Caller;
    reader: string | null;
    shell: ResponseShell;
    input: ResponseItemRecord[];
    response: Json;
  },
): Promise<Json> {
  const { caller, reader, shell, input, response } = record;
  try {
    await billing.saveResponse(caller.accountId, shell.id, {
      tokenDigest: reader,
      previousResponseId: shell.request.previous_response_id ?? null,
      inputItems: input,
      response,
    });
    return response;
  } catch (error) {
    log.error({ err: error, responseId: shell.id }, 'response not stored');
    const service = (response._service ?? {}) as Json;
    const warnings = [...((service.warnings as string[] | undefined) ?? []), NOT_STORED_WARNING];
    return { ...response, store: false, _service: { ...service, warnings: warnings.sort() } };
  }
}
