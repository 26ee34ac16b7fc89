/*
 * The hold of a job whose answer reached nobody through edge: edge gave up waiting for its
 * replies, or the broker did not confirm its publish. Whoever cannot go on finalises the hold
 * (docs/job-protocol.md, "Who owns the hold").
 */
import type { VoidRequest } from '@gateway/contracts';
import type { BillingClient } from '@gateway/billing-client';
import type { Logger } from '@gateway/observability';
import { BillingRetries, billingAway, type BillingRetriesOptions } from './billing-retries.js';

export interface ReleaseRequest {
  holdId: string;
  jobId: string;
  /**
   * What to do when the job settled before the void: `refund` when its answer could only reach
   * this request (a synchronous job, no chunk relayed); `keep` when what it produced reached
   * someone (a stream's relayed chunks, an async job's webhook).
   */
  ifSettled: 'refund' | 'keep';
  /** The usage record's outcome when the void ends a pending hold. */
  voidReport?: VoidRequest;
  log: Logger;
}

/**
 * `voided` and `refunded`: nothing is charged. `kept`: the job ran and settled, and keeps its
 * charge. `unknown`: billing did not answer; the release goes on in the background.
 */
export type Release = 'voided' | 'refunded' | 'kept' | 'unknown';

export interface HoldReleasesOptions extends BillingRetriesOptions {
  billing: Pick<BillingClient, 'void' | 'refund'>;
}

/**
 * Voids the hold, or refunds it when the job settled first. Billing may not answer at that
 * moment (PostgreSQL stalled or failing over, as the nemesis found); the hold would then stay
 * charged for a client told `500`, since the job's late final reply is dropped. So a release
 * that billing did not answer is retried in the background, bounded in attempts and in the
 * number retried at once. What the edge process does not finish before it stops is logged.
 */
export class HoldReleases {
  readonly #options: HoldReleasesOptions;
  readonly #retries: BillingRetries;

  constructor(options: HoldReleasesOptions) {
    this.#options = options;
    this.#retries = new BillingRetries(options);
  }

  /** Releases retried in the background now (for tests and metrics). */
  get pending(): number {
    return this.#retries.pending;
  }

  /**
   * One release (the billing client's own quick retries included). When billing does not
   * answer, `unknown`, and the release goes on in the background; `onDone` hears its outcome.
   * When billing refuses it (an unknown hold), `unknown` too, logged and not retried. Never
   * throws.
   */
  async release(
    request: ReleaseRequest,
    onDone: (release: Exclude<Release, 'unknown'>) => void = () => {},
  ): Promise<Release> {
    try {
      const release = await this.#attempt(request);
      onDone(release);
      return release;
    } catch (error) {
      if (billingAway(error)) this.#retryInBackground(request, error, onDone);
      else request.log.error({ err: error, jobId: request.jobId }, 'hold release refused');
      return 'unknown';
    }
  }

  /** Ends the background retries (edge is stopping). */
  stop(): void {
    this.#retries.stop();
  }

  async #attempt(request: ReleaseRequest): Promise<Exclude<Release, 'unknown'>> {
    const { billing } = this.#options;
    const voided = await billing.void(request.holdId, request.voidReport);
    if (voided.kind !== 'already_final') return 'voided';
    if (request.ifSettled === 'keep') return 'kept';
    await billing.refund(request.holdId);
    return 'refunded';
  }

  #retryInBackground(
    request: ReleaseRequest,
    firstError: unknown,
    onDone: (release: Exclude<Release, 'unknown'>) => void,
  ): void {
    const { log, jobId } = request;
    const retried = this.#retries.retry(() => this.#attempt(request));
    if (!retried) {
      log.error({ err: firstError, jobId }, 'hold not released; it may be charged');
      return;
    }
    log.warn({ err: firstError, jobId }, 'hold not released yet; retrying in the background');
    retried.then(
      (release) => {
        log.warn({ jobId, release }, 'hold released after billing answered again');
        onDone(release);
      },
      (error: unknown) => log.error({ err: error, jobId }, 'hold not released; it may be charged'),
    );
  }
}
