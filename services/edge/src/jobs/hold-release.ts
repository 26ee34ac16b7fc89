/*
 * The hold of a job whose answer reached nobody through edge: edge gave up waiting for its
 * replies, or the broker did not confirm its publish. Whoever cannot go on finalises the hold
 * (docs/job-protocol.md, "Who owns the hold").
 */
import { setTimeout as delay } from 'node:timers/promises';
import pRetry from 'p-retry';
import { GatewayError } from '@gateway/contracts';
import type { VoidRequest } from '@gateway/contracts';
import type { BillingClient } from '@gateway/billing-client';
import type { Logger } from '@gateway/observability';

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

export interface HoldReleasesOptions {
  billing: Pick<BillingClient, 'void' | 'refund'>;
  /** Background attempts after the first failed one, with exponential backoff between them. */
  retries?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Releases retried in the background at once; past this, a release is logged and left. */
  maxPending?: number;
}

/** With the defaults, the background attempts span about five minutes. */
const DEFAULT_RETRIES = 12;
const DEFAULT_MIN_BACKOFF_MS = 1_000;
const DEFAULT_MAX_BACKOFF_MS = 30_000;
const DEFAULT_MAX_PENDING = 10_000;

/**
 * Voids the hold, or refunds it when the job settled first. Billing may not answer at that
 * moment (PostgreSQL stalled or failing over, as the nemesis found); the hold would then stay
 * charged for a client told `500`, since the job's late final reply is dropped. So a release
 * that billing did not answer is retried in the background, bounded in attempts and in the
 * number retried at once. What the edge process does not finish before it stops is logged.
 */
export class HoldReleases {
  readonly #options: HoldReleasesOptions;
  readonly #stopping = new AbortController();
  #pending = 0;

  constructor(options: HoldReleasesOptions) {
    this.#options = options;
  }

  /** Releases retried in the background now (for tests and metrics). */
  get pending(): number {
    return this.#pending;
  }

  /**
   * One release (the billing client's own quick retries included). When billing does not
   * answer, `unknown`, and the release goes on in the background; `onDone` hears its outcome.
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
      if (!billingAway(error)) throw error;
      this.#retryInBackground(request, error, onDone);
      return 'unknown';
    }
  }

  /** Ends the background retries (edge is stopping). */
  stop(): void {
    this.#stopping.abort();
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
    const maxPending = this.#options.maxPending ?? DEFAULT_MAX_PENDING;
    if (this.#pending >= maxPending || this.#stopping.signal.aborted) {
      log.error({ err: firstError, jobId }, 'hold not released; it may be charged');
      return;
    }
    log.warn({ err: firstError, jobId }, 'hold not released yet; retrying in the background');
    this.#pending += 1;
    this.#retry(request)
      .then(
        (release) => {
          log.warn({ jobId, release }, 'hold released after billing answered again');
          onDone(release);
        },
        (error: unknown) =>
          log.error({ err: error, jobId }, 'hold not released; it may be charged'),
      )
      .finally(() => {
        this.#pending -= 1;
      });
  }

  async #retry(request: ReleaseRequest): Promise<Exclude<Release, 'unknown'>> {
    const minBackoffMs = this.#options.minBackoffMs ?? DEFAULT_MIN_BACKOFF_MS;
    const signal = this.#stopping.signal;
    // The first attempt just failed (after the billing client's own retries): wait first.
    await delay(minBackoffMs, undefined, { signal, ref: false });
    return pRetry(() => this.#attempt(request), {
      retries: this.#options.retries ?? DEFAULT_RETRIES,
      minTimeout: minBackoffMs,
      maxTimeout: this.#options.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS,
      factor: 2,
      randomize: true,
      signal,
      // A timer must not keep a stopping process alive.
      unref: true,
      shouldRetry: ({ error }) => billingAway(error),
    });
  }
}

/** Billing did not answer (unreachable, too slow, failing): the same call may work later. */
function billingAway(error: unknown): boolean {
  return !(error instanceof GatewayError) || error.status >= 500;
}
