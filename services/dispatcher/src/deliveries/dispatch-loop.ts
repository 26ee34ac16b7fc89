import type { Logger } from '@gateway/observability';
import type { DispatcherMetrics } from '../metrics.js';
import type { SigningSecrets } from '../secrets/signing-secrets.js';
import type { ClaimedDelivery, DeliveryRepository } from './delivery-repository.js';

export interface DispatchLoopOptions {
  repository: DeliveryRepository;
  secrets: SigningSecrets;
  attempt: (claim: ClaimedDelivery) => Promise<void>;
  metrics: DispatcherMetrics;
  logger: Logger;
  intervalMs: number;
  /** Deliveries one tick claims at most. */
  batchSize: number;
  /** Attempts in flight at once, across ticks: a slow endpoint holds one slot, not the loop. */
  concurrency: number;
  /**
   * Attempts in flight for one account at which its due deliveries are claimed after every
   * other account's (it still gets the slots they leave): an account whose endpoint hangs cannot
   * keep the others' deliveries waiting for more than one slot to free up.
   */
  accountConcurrency: number;
  /** How long a claim keeps a delivery from other dispatchers: above one attempt's length. */
  leaseMs: number;
}

/** Payloads purged per statement, so one purge never holds many row locks for long. */
const PURGE_BATCH = 500;

/**
 * The background dispatch: every `intervalMs` (counted from the end of the previous tick, so
 * ticks never overlap) purge what is past retention, then claim due deliveries into free
 * attempt slots. Attempts run on after the tick that started them. When a tick left due work
 * behind for lack of slots, a finishing attempt starts the next tick early. A completion that
 * arrives `nudge`s the loop: a claim runs at once (without the purge), so a first attempt goes
 * out milliseconds after the result exists, and the interval stays the retry cadence and the
 * upper bound. The schedule lives in PostgreSQL, so a restarted dispatcher continues where it was.
 */
export class DispatchLoop {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  /** Attempts in flight (at most `concurrency`), each with its delivery's account. */
  private readonly inFlight = new Map<Promise<void>, string>();
  private backlogged = false;
  private stopping = false;
  /** A nudge came while a tick ran: claim again as soon as it ends. */
  private nudged = false;

  constructor(private readonly options: DispatchLoopOptions) {}

  start(): void {
    this.schedule(0);
  }

  /** Stops ticking and waits for the attempts in flight (each bounded by its timeout). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.ticking;
    await Promise.all(this.inFlight.keys());
  }

  /** A delivery is due now (its completion just arrived): claim soon, not at the next tick. */
  nudge(): void {
    if (this.stopping) return;
    if (this.ticking) {
      this.nudged = true;
      return;
    }
    this.schedule(0, { purge: false });
  }

  /** One tick: purge, then claim into free slots. Public for tests that drive the loop. */
  async tick(options: { purge?: boolean } = {}): Promise<void> {
    if (options.purge !== false) await this.purge();
    const { batchSize, concurrency, leaseMs, repository } = this.options;
    let claimed = 0;
    this.backlogged = false;
    while (!this.stopping && claimed < batchSize) {
      const take = Math.min(concurrency - this.inFlight.size, batchSize - claimed);
      if (take <= 0) {
        this.backlogged = true;
        return;
      }
      const claims = await repository.claimDue(take, leaseMs, this.crowdedAccounts());
      claimed += claims.length;
      claims.forEach((claim) => this.track(claim.accountId, this.attemptSafely(claim)));
      if (claims.length < take) return;
    }
    this.backlogged = claimed >= batchSize;
  }

  /** Resolves when every attempt started so far has finished (tests). */
  async idle(): Promise<void> {
    await Promise.all(this.inFlight.keys());
  }

  private schedule(delayMs: number, tickOptions: { purge?: boolean } = {}): void {
    if (this.stopping) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.ticking = this.tick(tickOptions)
        .catch((error: unknown) =>
          this.options.logger.error({ err: error }, 'dispatch tick failed'),
        )
        .finally(() => {
          this.ticking = undefined;
          if (this.nudged) {
            this.nudged = false;
            this.schedule(0, { purge: false });
          } else {
            this.schedule(this.options.intervalMs);
          }
        });
    }, delayMs);
  }

  private track(accountId: string, attempt: Promise<void>): void {
    this.inFlight.set(attempt, accountId);
    void attempt.finally(() => {
      this.inFlight.delete(attempt);
      if (this.backlogged && !this.ticking) this.schedule(0);
    });
  }

  /** The accounts holding their share of the slots, whose due deliveries go last. */
  private crowdedAccounts(): string[] {
    const attempts = new Map<string, number>();
    for (const accountId of this.inFlight.values()) {
      attempts.set(accountId, (attempts.get(accountId) ?? 0) + 1);
    }
    return [...attempts].filter(([, n]) => n >= this.options.accountConcurrency).map(([id]) => id);
  }

  private async purge(): Promise<void> {
    const purged = await this.options.repository.purgeExpired(PURGE_BATCH);
    if (purged > 0) {
      this.options.metrics.purgedPayloads.inc(purged);
      this.options.logger.info({ count: purged }, 'stored results purged');
    }
    await this.options.secrets.purgeExpired();
  }

  /** A failing attempt (database down, undecryptable payload) leaves its lease to lapse. */
  private async attemptSafely(claim: ClaimedDelivery): Promise<void> {
    try {
      await this.options.attempt(claim);
    } catch (error) {
      this.options.logger.error({ deliveryId: claim.id, err: error }, 'attempt failed to run');
    }
  }
}
