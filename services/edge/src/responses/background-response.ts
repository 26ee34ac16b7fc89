/*
 * `background: true`: the response runs as a job while the client does something else. Edge
 * saves it `queued` (billing's stored state, in progress), answers at once, and reads the job's
 * replies in the background: the result (completed, incomplete or failed) replaces the stored
 * response once. `POST /v1/responses/{id}/cancel`, on any edge replica, cancels the job (the
 * worker bills what was produced) and stores the response `cancelled`; the job's own result,
 * arriving after, then changes nothing.
 *
 * Why edge runs it rather than the async (webhook) path: that path ends at the dispatcher with
 * the native endpoint's result shape, while a response must be translated back and stored, which
 * edge does. The cost: if the edge replica running it stops, the job's answer reaches nobody (the
 * worker refunds an undelivered answer) and the response reads `failed` (`response_lost`) once
 * billing sees its job ended (responses-state-api.ts, BACKGROUND_RESPONSE_LOST_AFTER_MS).
 */
import { GatewayError, type ResponsesRequest } from '@gateway/contracts';
import type { BillingClient } from '@gateway/billing-client';
import type { Logger } from '@gateway/observability';
import { asGatewayError } from '@gateway/runtime';
import type { InferenceJobs } from '../jobs/inference-jobs.js';
import type { RunningJob } from '../jobs/job-replies.js';
import { serviceBlock } from '../routes/service-block.js';
import { invalidInput } from './input-items.js';
import { ResponseEvents } from './response-events.js';
import { responseObject, type ResponseShell } from './response-object.js';

type Json = Record<string, unknown>;

/** A background response is stored (its result is read later) and not streamed. */
export function assertBackgroundServed(request: ResponsesRequest): void {
  if (request.background !== true) {
    if (request.webhook !== undefined) {
      throw invalidInput('A webhook announces a background response: set background', 'webhook');
    }
    return;
  }
  if (request.store === false) {
    throw invalidInput('A background response is stored: background needs store: true', 'store');
  }
  if (request.stream === true) {
    throw invalidInput(
      'A background response is not streamed here: create it, then GET /v1/responses/{id}',
      'stream',
    );
  }
}

/** The answer to a background request, and what is stored until its result replaces it. */
export const queuedResponse = (shell: ResponseShell, holdId: string): Json => ({
  ...responseObject(shell, { status: 'queued', output: [] }),
  _service: { hold_id: holdId },
});

/** Who owns a background response's stored state, as the billing calls name it. */
export interface BackgroundOwner {
  accountId: string;
  /** The scoped token's digest that stored it; null: an API key. */
  reader: string | null;
}

/**
 * Background runs of this edge process, bounded: each holds a job's replies in memory until it
 * ends (`BACKGROUND_RESPONSES_MAX`; one more is 503 before any hold).
 */
export class BackgroundResponses {
  #running = 0;

  constructor(
    private readonly billing: Pick<BillingClient, 'finishResponse'>,
    private readonly maxRunning: number,
  ) {}

  get running(): number {
    return this.#running;
  }

  /** Checked before admission: a run refused here has no hold to release. */
  assertRoom(): void {
    if (this.#running >= this.maxRunning) {
      throw new GatewayError(
        'service_unavailable',
        'Too many background responses are running on this gateway; retry shortly',
        { details: { retryAfterS: 5 } },
      );
    }
  }

  /** Reads the job to its end and stores its result; never throws (it runs detached). */
  async run(job: RunningJob, shell: ResponseShell, owner: BackgroundOwner, log: Logger) {
    this.#running += 1;
    try {
      const response = { ...(await resultOf(job, shell)), background: true };
      const finished = await this.billing.finishResponse(owner.accountId, shell.id, {
        reader: owner.reader,
        response,
      });
      // Cancelled first: the cancel's answer stands (the job was billed for what it produced).
      if (!finished) log.info({ responseId: shell.id }, 'background response ended elsewhere');
    } catch (error) {
      log.error({ err: error, responseId: shell.id }, 'background response result not stored');
    } finally {
      this.#running -= 1;
    }
  }
}

/** The job's chat chunks folded into the response object: its end, or its failure. */
async function resultOf(job: RunningJob, shell: ResponseShell): Promise<Json> {
  const events = new ResponseEvents(shell);
  events.start();
  try {
    let reply = await job.next();
    while (reply.type !== 'final') {
      events.chunk(reply.data ?? {});
      reply = await job.next();
    }
    events.chunk(reply.data ?? {});
    const service = serviceBlock(reply);
    return events.finish(service.cost_dzd, { ...service }).response;
  } catch (error) {
    const failure = asGatewayError(error);
    return events.fail(failure).at(-1)!.response as Json;
  }
}

/**
 * `POST /v1/responses/{id}/cancel`: the job cancelled, then the response stored `cancelled`
 * (whichever result is stored first stands). One that ended already is answered as it is; one
 * that was not created in the background cannot be cancelled (400).
 */
export async function cancelResponse(
  deps: {
    billing: Pick<BillingClient, 'responseRecord' | 'finishResponse'>;
    jobs: Pick<InferenceJobs, 'cancel'>;
  },
  owner: BackgroundOwner,
  responseId: string,
): Promise<Json> {
  const { accountId, reader } = owner;
  const record = await deps.billing.responseRecord(accountId, responseId, reader);
  if (record.response.background !== true) {
    throw invalidInput('Only a background response can be cancelled', 'response_id');
  }
  if (!record.inProgress) return record.response;
  // Cancelled before it is stored so: a cancel that could not be published changes nothing.
  await deps.jobs.cancel(responseId);
  const cancelled = { ...record.response, status: 'cancelled' };
  if (await deps.billing.finishResponse(accountId, responseId, { reader, response: cancelled })) {
    return cancelled;
  }
  return (await deps.billing.responseRecord(accountId, responseId, reader)).response;
}
