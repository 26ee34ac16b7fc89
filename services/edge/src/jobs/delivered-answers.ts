/*
 * Answers edge sent although billing may think nobody received them: a reply whose
 * acknowledgement may not have reached the broker (ADR 0068: a copy given back must not be
 * refunded if it goes unread), or an answer sent while billing did not answer the store for its
 * Idempotency-Key (ADR 0067: its claim must not be refunded when it lapses). Billing is told.
 */
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
  mark(holdId: string): void {
    const { log } = this.#options;
    void this.#attempt(holdId).catch((error: unknown) => {
      const retried = billingAway(error) ? this.#retries.retry(() => this.#attempt(holdId)) : null;
      if (!retried) {
        log.error({ err: error, holdId }, 'delivered answer not marked; it may be refunded');
        return;
      }
      retried.catch((retryError: unknown) =>
        log.error({ err: retryError, holdId }, 'delivered answer not marked; it may be refunded'),
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
