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
 * edge does. The cost: if the edge process running it stops (shutdown waits a little for running
 * ones), its answer reaches nobody; billing then ends the response `failed` (`response_lost`) and
 * refunds its hold (responses-state-api.ts, BACKGROUND_RESPONSE_LOST_AFTER_MS).
 */
import { GatewayError, holdIdOfJob, type ResponsesRequest } from '@gateway/contracts';
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

/** Gives a reserved run's slot back (once; later calls do nothing). */
export type ReleaseSlot = () => void;

/**
 * Background runs of this edge process, bounded: each holds a job's replies in memory until it
 * ends (`BACKGROUND_RESPONSES_MAX`; one more is 503 before any hold).
 */
export class BackgroundResponses {
  #running = 0;
  #closed = false;
  #idle: (() => void)[] = [];

  constructor(
    private readonly billing: Pick<BillingClient, 'finishResponse' | 'refund'>,
    private readonly maxRunning: number,
  ) {}

  get running(): number {
    return this.#running;
  }

  /**
   * A slot for one run, taken before admission, so a burst cannot pass the bound together; the
   * run gives it back when it ends, the request if it fails first.
   */
  reserve(): ReleaseSlot {
    if (this.#closed || this.#running >= this.maxRunning) {
      throw new GatewayError(
        'service_unavailable',
        'Too many background responses are running on this gateway; retry shortly',
        { details: { retryAfterS: 5 } },
      );
    }
    this.#running += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running -= 1;
      if (this.#running === 0) for (const wake of this.#idle.splice(0)) wake();
    };
  }

  /**
   * Shutdown: takes no new run and waits up to `timeoutMs` for the running ones to store their
   * result. One still running is lost with this process: billing ends it `failed`
   * (`response_lost`) and refunds its answer, which reached nobody.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.#closed = true;
    if (this.#running === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Reads the job to its end and stores its result; never throws (it runs detached). */
  async run(
    job: RunningJob,
    shell: ResponseShell,
    owner: BackgroundOwner,
    log: Logger,
    release: ReleaseSlot,
  ): Promise<void> {
    try {
      const result = await resultOf(job, shell);
      if (await this.#store(owner, shell.id, { ...result, background: true })) return;
      // Cancelled first. A job that answered anyway was charged for an answer nobody will
      // read: refunded, as an undelivered answer is. A cancelled one keeps what it produced.
      log.info({ responseId: shell.id }, 'background response cancelled before its result');
      if (result.status !== 'failed') await this.billing.refund(holdIdOfJob(job.jobId));
    } catch (error) {
      log.error({ err: error, responseId: shell.id }, 'background response result not stored');
    } finally {
      release();
    }
  }

  /**
   * Stores the result once; false when the response was no longer in progress. A result
   * billing refuses as it is (over the stored size) is stored `failed`, saying why.
   */
  async #store(owner: BackgroundOwner, responseId: string, response: Json): Promise<boolean> {
    const finish = (result: Json) =>
      this.billing.finishResponse(owner.accountId, responseId, {
        reader: owner.reader,
        response: result,
      });
    try {
      return await finish(response);
    } catch (error) {
      const refusal = asGatewayError(error);
      if (refusal.status !== 400) throw error;
      return finish({
        ...response,
        status: 'failed',
        output: [],
        error: { code: 'response_not_stored', message: refusal.message },
      });
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
 * `POST /v1/responses/{id}/cancel`: the response stored `cancelled` first (whichever end is
 * stored first stands: the job's own result after it changes nothing), then the job cancelled,
 * which bills what it produced. A cancel that could not be published is published again by the
 * client's retry. One that ended otherwise is answered as it is; one that was not created in the
 * background cannot be cancelled (400).
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
  let response = record.response;
  if (record.inProgress) {
    const cancelled = { ...record.response, status: 'cancelled' };
    const stored = await deps.billing.finishResponse(accountId, responseId, {
      reader,
      response: cancelled,
    });
    response = stored
      ? cancelled
      : (await deps.billing.responseRecord(accountId, responseId, reader)).response;
  }
  if (response.status === 'cancelled') await deps.jobs.cancel(responseId);
  return response;
}
