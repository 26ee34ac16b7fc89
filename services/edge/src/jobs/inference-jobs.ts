import { GatewayError, microDzdToWire } from '@gateway/contracts';
import type { InferenceEndpoint, InferenceJobPayload } from '@gateway/contracts';
import type { Logger } from '@gateway/observability';
import { currentRequestId } from '@gateway/runtime';
import type { Admission, BillingClient } from '@gateway/billing-client';
import type { Caller } from '@gateway/contracts';
import type { JobPublisher } from './job-publisher.js';
import type { ReplyRouter } from './reply-router.js';
import { RunningJob } from './running-job.js';

/** Time after a job's generation for its worker to settle or void it (billing retries included). */
const SETTLE_MARGIN_MS = 60_000;
const DEFAULT_MAX_GENERATION_MS = 30 * 60_000;

/** What a route decided about one inference request, once billing admitted it. */
export interface JobSpec {
  jobId: string;
  endpoint: InferenceEndpoint;
  caller: Caller;
  admission: Admission;
  priority: boolean;
  stream: boolean;
  /** The validated body as the worker needs it (job-protocol.md §1). */
  request: Record<string, unknown>;
  promptTokens: number;
}

export interface InferenceJobsOptions {
  publisher: JobPublisher;
  replies: ReplyRouter;
  billing: Pick<BillingClient, 'void' | 'published' | 'refund'>;
  /** No (next) reply within this: the job is cancelled, its hold voided, 500 GATEWAY_TIMEOUT. */
  replyTimeoutMs: number;
  /** Async jobs not started within this are failed by the worker without calling a model. */
  asyncDeadlineMs: number;
  /**
   * The longest a started job may generate (the worker's JOB_MAX_GENERATION_MS, which must not
   * be larger): a job's deadline bounds its queue wait only, so its hold must outlive the
   * deadline by this much. 30 minutes by default.
   */
  maxGenerationMs?: number;
  now?: () => number;
}

/**
 * Hands admitted requests to the workers. Whoever cannot go on finalises the hold (job-protocol
 * "Who owns the hold"): edge voids it when the job could not be published and when it gave up
 * waiting; otherwise the worker settles or voids.
 */
export class InferenceJobs {
  readonly #options: InferenceJobsOptions;
  readonly #now: () => number;

  constructor(options: InferenceJobsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Checked before admission, so no hold is placed when replies could not be received. */
  assertReady(): void {
    if (!this.#options.replies.ready) {
      throw new GatewayError('service_unavailable', 'The gateway is starting; retry shortly', {
        details: { retryAfterS: 1 },
      });
    }
  }

  /** Publishes a job whose replies come back to this process. */
  async start(spec: JobSpec, log: Logger): Promise<RunningJob> {
    const { replies, replyTimeoutMs } = this.#options;
    const job = new RunningJob({
      jobId: spec.jobId,
      holdId: spec.admission.hold.id,
      replyTimeoutMs,
      publisher: this.#options.publisher,
      billing: this.#options.billing,
      log,
    });
    // Listen before publishing: a fast worker's first reply must not find nobody waiting.
    job.attach(replies.listen(spec.jobId, (reply) => job.push(reply)));
    await this.#publish(
      { ...this.#payload(spec, this.#now() + replyTimeoutMs), replyTo: replies.queue },
      spec,
      log,
      () => job.dispose(),
    );
    return job;
  }

  /** Publishes a job whose result goes to a webhook (via the dispatcher); nothing comes back. */
  async submitAsync(spec: JobSpec, webhookUrl: string, log: Logger): Promise<void> {
    const payload: InferenceJobPayload = {
      ...this.#payload(spec, this.#now() + this.#options.asyncDeadlineMs),
      webhookUrl,
      webhookFormat: spec.caller.webhookFormat,
    };
    await this.#publish(payload, spec, log, () => {});
  }

  #payload(spec: JobSpec, deadlineAtMs: number): InferenceJobPayload {
    // Routes run inside their HTTP request's scope: the worker logs and forwards this id.
    const requestId = currentRequestId();
    return {
      jobId: spec.jobId,
      ...(requestId === undefined ? {} : { requestId }),
      accountId: spec.caller.accountId,
      holdId: spec.admission.hold.id,
      model: spec.admission.model.id,
      modelKind: spec.admission.model.kind,
      modelUpdatedAt: spec.admission.model.updatedAt,
      endpoint: spec.endpoint,
      serviceTier: spec.priority ? 'priority' : 'default',
      stream: spec.stream,
      request: spec.request,
      deadlineAtMs,
      promptTokens: spec.promptTokens,
      ...(spec.admission.prices === undefined
        ? {}
        : {
            pricing: {
              ...spec.admission.prices,
              holdMicroDzd: microDzdToWire(spec.admission.hold.amountMicroDzd),
            },
          }),
    };
  }

  async #publish(
    payload: InferenceJobPayload,
    spec: JobSpec,
    log: Logger,
    onFailure: () => void,
  ): Promise<void> {
    try {
      await this.#options.publisher.publishJob(payload);
    } catch (error) {
      await this.#unpublished(spec, log, error, onFailure);
    }
    // Billing releases a hold never marked published after its grace (edge died before this
    // line); marked, it lasts until the job cannot run any more, plus time to settle it. Not
    // awaited: the job is already queued and its replies are listened for.
    void this.#options.billing
      .published(
        spec.admission.hold.id,
        payload.deadlineAtMs +
          (this.#options.maxGenerationMs ?? DEFAULT_MAX_GENERATION_MS) +
          SETTLE_MARGIN_MS,
      )
      .catch((error: unknown) => log.warn({ err: error }, 'hold not marked published'));
  }

  async #unpublished(
    spec: JobSpec,
    log: Logger,
    error: unknown,
    onFailure: () => void,
  ): Promise<never> {
    onFailure();
    log.error({ err: error, jobId: spec.jobId }, 'job not published; voiding its hold');
    // Never queued: the usage record says refused (admitted, then not run).
    await this.#options.billing
      .void(spec.admission.hold.id, { outcome: 'refused' })
      .catch((voidError: unknown) => log.error({ err: voidError }, 'hold not voided'));
    throw new GatewayError('GATEWAY_TIMEOUT', 'The request could not be queued; retry shortly', {
      cause: error,
    });
  }
}
