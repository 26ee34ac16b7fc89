/*
 * Answers edge handed to their requests although the acknowledgement of their reply was lost
 * (ADR 0068): billing is told, so that the reply's copy the broker gave back is not refunded
 * should it go unread.
 */
import { holdIdOfJob } from '@gateway/contracts';
import type { BillingClient } from '@gateway/billing-client';
import type { Logger } from '@gateway/observability';
import { BillingRetries, billingAway, type BillingRetriesOptions } from './billing-retries.js';

export interface DeliveredAnswersOptions extends BillingRetriesOptions {
  billing: Pick<BillingClient, 'markAnswerDelivered'>;
  log: Logger;
}

export class DeliveredAnswers {
  readonly #options: DeliveredAnswersOptions;
  readonly #retries: BillingRetries;

  constructor(options: DeliveredAnswersOptions) {
    this.#options = options;
    this.#retries = new BillingRetries(options);
  }

  /** Marks sent or retried in the background now (for tests and metrics). */
  get pending(): number {
    return this.#retries.pending;
  }

  /** Tells billing, in the background (retried while billing does not answer). */
  mark(jobId: string): void {
    const { log } = this.#options;
    const holdId = holdIdOfJob(jobId);
    void this.#attempt(holdId).catch((error: unknown) => {
      const retried = billingAway(error) ? this.#retries.retry(() => this.#attempt(holdId)) : null;
      if (!retried) {
        log.error({ err: error, jobId }, 'delivered answer not marked; it may be refunded');
        return;
      }
      retried.catch((retryError: unknown) =>
        log.error({ err: retryError, jobId }, 'delivered answer not marked; it may be refunded'),
      );
    });
  }

  /** Ends the background retries (edge is stopping). */
  stop(): void {
    this.#retries.stop();
  }

  async #attempt(holdId: string): Promise<void> {
    const { refunded } = await this.#options.billing.markAnswerDelivered(holdId);
    if (refunded) {
      // Its unread copy was refunded before the mark: the answer went out free of charge.
      this.#options.log.warn({ holdId }, 'delivered answer was refunded already');
    }
  }
}
