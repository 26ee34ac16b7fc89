/*
 * The submit step (no Express): a route's plan becomes billing's admission request, then, with
 * billing's answer, the job a worker runs, published to `gateway.jobs` (cancels to
 * `gateway.control`). Its replies come back through job-replies.ts.
 */
import { GatewayError, holdIdOfJob, makeEnvelope, microDzdToWire } from '@gateway/contracts';
import type {
  AdmissionRequest,
  InferenceCancelPayload,
  InferenceEndpoint,
  InferenceJobPayload,
  ModelKind,
} from '@gateway/contracts';
import type { GatewayNames, MessageBus } from '@gateway/messaging';
import type { Logger } from '@gateway/observability';
import type { Admission, BillingClient } from '@gateway/billing-client';
import type { HoldReleases } from './hold-release.js';
import type { DirectJobs } from './direct-jobs.js';
import { RunningJob, type ReplyRouter } from './job-replies.js';

/** Time after a job's generation for its worker to settle or void it (billing retries included). */
const SETTLE_MARGIN_MS = 60_000;
const DEFAULT_MAX_GENERATION_MS = 30 * 60_000;

/**
 * One inference request as a route planned it: the one shape from the route to the worker. Its
 * admission fields are billing's admission request as is; the job payload is built from the
 * plan and billing's answer (`jobPayload`).
 */
export type InferencePlan = Pick<
  AdmissionRequest,
  'model' | 'estimate' | 'priority' | 'nodeUnsupportedParameter' | 'media'
> & {
  endpoint: InferenceEndpoint;
  jobId: string;
  stream: boolean;
  /** What the worker receives as `request`. */
  request: Record<string, unknown>;
  /** Default-models-only routes: `['node']`. */
  providers?: AdmissionRequest['providers'];
  kinds?: ModelKind[];
};

/**
 * A shallow copy of `value` without `keys`: the plan without what billing does not take, a body
 * without what the worker does not get (`webhook`, or `model` on the media routes).
 */
export function omit<T extends object, K extends keyof T>(value: T, ...keys: K[]): Omit<T, K> {
  const copy = { ...value };
  for (const key of keys) delete copy[key];
  return copy;
}

/** Who is asking, from the HTTP request (the submit step knows no Express). */
export interface Credential {
  authorization?: string;
  requestId?: string;
}

/**
 * Billing's admission request for a plan. The hold id is the job id: admission is idempotent on
 * it, so a lost answer is retried safely, and one id names the job and its hold everywhere.
 */
export function admissionRequest(plan: InferencePlan, credential: Credential): AdmissionRequest {
  return {
    ...omit(plan, 'jobId', 'stream', 'request'),
    holdId: holdIdOfJob(plan.jobId),
    ...(credential.authorization === undefined ? {} : { authorization: credential.authorization }),
    ...(credential.requestId === undefined ? {} : { requestId: credential.requestId }),
  };
}

/** The job a worker runs, from the plan and billing's admission (job-protocol.md §1). */
export function jobPayload(
  plan: InferencePlan,
  admission: Admission,
  deadlineAtMs: number,
  requestId: string | undefined,
): InferenceJobPayload {
  const { hold, model, prices } = admission;
  return {
    jobId: plan.jobId,
    // The worker logs and forwards the HTTP request's id.
    ...(requestId === undefined ? {} : { requestId }),
    accountId: admission.caller.accountId,
    holdId: hold.id,
    model: model.id,
    modelKind: model.kind,
    modelUpdatedAt: model.updatedAt,
    endpoint: plan.endpoint,
    serviceTier: plan.priority ? 'priority' : 'default',
    stream: plan.stream,
    request: plan.request,
    deadlineAtMs,
    promptTokens: plan.estimate.inputTokens,
    ...(prices === undefined
      ? {}
      : { pricing: { ...prices, holdMicroDzd: microDzdToWire(hold.amountMicroDzd) } }),
  };
}

export interface InferenceJobsOptions {
  publisher: JobPublisher;
  /** Workers that take synchronous jobs over HTTP (`WORKER_URLS`); unset: the queue only. */
  direct?: Pick<DirectJobs, 'offer'>;
  replies: ReplyRouter;
  billing: Pick<BillingClient, 'admit' | 'published' | 'publishedLater'>;
  /** Voids or refunds the hold of a job whose answer reached nobody. */
  releases: HoldReleases;
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
  /**
   * A synchronous job's publish mark waits this long and is dropped if the job ends first (its
   * hold is then final); below billing's HOLD_PUBLISH_GRACE_MS with room for the call. 0: at once.
   */
  publishMarkDelayMs?: number;
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

  /**
   * Billing's admission of a plan, in one call: authentication, suspension, token state, rate
   * limit, model (of a provider and kind the endpoint serves), the token's model list, budget and
   * balance, and the hold for the worst case, in the order of the spec's error table.
   */
  async admit(plan: InferencePlan, credential: Credential): Promise<Admission> {
    this.assertReady();
    return this.#options.billing.admit(admissionRequest(plan, credential));
  }

  /** Publishes a job whose replies come back to this process. */
  async start(
    plan: InferencePlan,
    admission: Admission,
    log: Logger,
    requestId?: string,
  ): Promise<RunningJob> {
    const { replies, replyTimeoutMs } = this.#options;
    const job = new RunningJob({
      jobId: plan.jobId,
      holdId: admission.hold.id,
      replyTimeoutMs,
      publisher: this.#options.publisher,
      releases: this.#options.releases,
      log,
    });
    // Listen before publishing: a fast worker's first reply must not find nobody waiting.
    const unlisten = replies.listen(plan.jobId, job);
    job.attach(unlisten);
    const deadlineAtMs = this.#now() + replyTimeoutMs;
    const direct = jobPayload(plan, admission, deadlineAtMs, requestId);
    const payload = { ...direct, replyTo: replies.queue };
    // A worker that takes the job directly answers on the same connection (ADR 0072); one
    // that does not leaves it to the queue, which waits for a free slot.
    const taken = await this.#options.direct?.offer(direct, {
      push: (reply) => job.push(reply),
      replyPathLost: () => void this.#requeue(payload, job, log),
    });
    if (typeof taken === 'object') {
      job.attach(() => {
        unlisten();
        taken.abandon();
      });
    } else {
      // A worker may have read a job whose call failed: its queued copy checks the hold first.
      const queued = taken === 'unknown' ? { ...payload, redelivery: true as const } : payload;
      await this.#publish(queued, log, { answerLost: true, onFailure: () => job.dispose() });
    }
    // Most synchronous jobs end, settled, long before billing's publish grace: their holds need
    // no mark, which saves a billing call and a statement per request.
    const mark = this.#options.billing.publishedLater(
      payload.holdId,
      this.#holdExpiresAtMs(payload),
      this.#options.publishMarkDelayMs ?? 0,
    );
    job.onHoldFinal(() => mark.withdraw());
    void mark.sent.catch((error: unknown) => log.warn({ err: error }, 'hold not marked published'));
    return job;
  }

  /**
   * A worker took the job directly and its answer broke off before the last reply (the worker
   * died, or could not make the outcome durable): the job is queued again as a redelivery, as
   * the broker would redeliver a job whose worker died. The next worker reads the hold first
   * and runs the model only if it is still pending; replies of its run replace the lost run's
   * before any chunk, and end a stream that had chunks (job-protocol.md §2, "Attempts"). Not
   * queued, the job is given up on (cancelled, its hold voided or refunded).
   */
  async #requeue(payload: InferenceJobPayload, job: RunningJob, log: Logger): Promise<void> {
    if (job.ended) return;
    log.warn({ jobId: payload.jobId }, 'direct job lost with its worker: queued again');
    try {
      await this.#options.publisher.publishJob({ ...payload, redelivery: true });
    } catch (error) {
      log.error({ err: error, jobId: payload.jobId }, 'lost direct job not queued again');
      job.replyPathLost('lost on its way from the worker');
    }
  }

  /** Publishes a job whose result goes to a webhook (via the dispatcher); nothing comes back. */
  async submitAsync(
    plan: InferencePlan,
    admission: Admission,
    webhookUrl: string,
    log: Logger,
    requestId?: string,
  ): Promise<void> {
    const deadlineAtMs = this.#now() + this.#options.asyncDeadlineMs;
    const payload: InferenceJobPayload = {
      ...jobPayload(plan, admission, deadlineAtMs, requestId),
      webhookUrl,
      webhookFormat: admission.caller.webhookFormat,
    };
    // Its webhook reports what a job that ran anyway produced (its hold is final: no mark).
    const confirmed = await this.#publish(payload, log, { answerLost: false, onFailure: () => {} });
    if (!confirmed) return;
    // Not awaited: the job is already queued. Edge never learns when an async job ends.
    void this.#options.billing
      .published(payload.holdId, this.#holdExpiresAtMs(payload))
      .catch((error: unknown) => log.warn({ err: error }, 'hold not marked published'));
  }

  /**
   * Cancels a job whichever edge started it (a background response's cancel): every worker
   * hears it; the one running the job stops and bills what was produced, a queued job is dropped
   * when it arrives. Confirmed by the broker before it resolves.
   */
  async cancel(jobId: string): Promise<void> {
    await this.#options.publisher.publishCancel({ jobId, reason: 'client_cancelled' });
  }

  /**
   * Billing releases a hold never marked published after its grace (edge died before marking
   * it); marked, it lasts until the job cannot run any more, plus time to settle it.
   */
  #holdExpiresAtMs(payload: InferenceJobPayload): number {
    const maxGenerationMs = this.#options.maxGenerationMs ?? DEFAULT_MAX_GENERATION_MS;
    return payload.deadlineAtMs + maxGenerationMs + SETTLE_MARGIN_MS;
  }

  /** Publishes the job; resolves false when it was not confirmed yet ran (see below). */
  async #publish(
    payload: InferenceJobPayload,
    log: Logger,
    failed: UnpublishedJob,
  ): Promise<boolean> {
    try {
      await this.#options.publisher.publishJob(payload);
      return true;
    } catch (error) {
      await this.#unpublished(payload, log, error, failed);
      return false;
    }
  }

  /**
   * The broker did not confirm the job, so its hold is voided. The job may still have been
   * queued (its confirm lost or late while the message got through, as the nemesis saw with a
   * broker node paused or the path to the broker stalled) and run: its worker then settled
   * first and the void finds the hold final. A synchronous answer then reaches nobody (this
   * request answers an error): refunded. An async job's webhook reports what it produced, so
   * the request is answered as accepted after all. Otherwise the request fails (retry).
   */
  async #unpublished(
    payload: InferenceJobPayload,
    log: Logger,
    error: unknown,
    failed: UnpublishedJob,
  ): Promise<void> {
    failed.onFailure();
    const { jobId, holdId } = payload;
    log.error({ err: error, jobId }, 'job not published; voiding its hold');
    const release = await this.#options.releases.release({
      holdId,
      jobId,
      ifSettled: failed.answerLost ? 'refund' : 'keep',
      // Never queued: the usage record says refused (admitted, then not run).
      voidReport: { outcome: 'refused' },
      log,
    });
    if (release === 'kept') {
      log.warn({ jobId }, 'unconfirmed async job ran anyway: accepted');
      return;
    }
    if (release === 'refunded') log.warn({ jobId }, 'unconfirmed job ran anyway: refunded');
    throw new GatewayError('GATEWAY_TIMEOUT', 'The request could not be queued; retry shortly', {
      cause: error,
    });
  }
}

/** What a job whose publish failed leaves to do. */
interface UnpublishedJob {
  /** Its answer could only reach this request, which fails (a synchronous job). */
  answerLost: boolean;
  onFailure(): void;
}

/**
 * Publishing side of the job protocol (docs/job-protocol.md): jobs to `gateway.jobs` with routing
 * key `priority` or `default` (so a backlog of default jobs never delays a priority one),
 * `correlationId` = job id; cancellations to `gateway.control` with key `cancel`, which every
 * worker receives. Both are confirmed by the broker before the promise resolves.
 */
export class JobPublisher {
  constructor(
    private readonly bus: MessageBus,
    private readonly names: GatewayNames,
  ) {}

  async publishJob(job: InferenceJobPayload): Promise<void> {
    const envelope = makeEnvelope('inference.job', job);
    const routingKey =
      job.serviceTier === 'priority'
        ? this.names.routingKeys.priorityJob
        : this.names.routingKeys.defaultJob;
    await this.bus.publish({ exchange: this.names.exchanges.jobs, routingKey }, envelope, {
      messageId: envelope.id,
      correlationId: job.jobId,
      ...(job.replyTo === undefined ? {} : { replyTo: job.replyTo }),
    });
  }

  async publishCancel(cancel: InferenceCancelPayload): Promise<void> {
    const envelope = makeEnvelope('inference.cancel', cancel);
    await this.bus.publish(
      { exchange: this.names.exchanges.control, routingKey: this.names.routingKeys.cancelJob },
      envelope,
      { messageId: envelope.id, correlationId: cancel.jobId },
    );
  }
}
