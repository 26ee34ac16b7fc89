/**
 * The alerts loop: every `intervalMs` (counted from the end of the previous
 * tick) it claims up to `batchSize` accounts whose alerts are on and were not evaluated for an
 * interval, evaluates them, then publishes pending events. Every replica runs it: the claim is
 * `FOR UPDATE SKIP LOCKED` and stamps `evaluated_at`, so replicas share the accounts, and the
 * outbox's deterministic ids make a double evaluation harmless anyway.
 */
import type { Keyring } from '@gateway/crypto';
import type { AlertEvaluator, AlertEvent } from './alert-evaluator.js';
import type { AlertOutbox, PublishResult } from './alert-outbox.js';
import type { AlertRepository } from './alert-repository.js';
import { openSettings } from './alert-settings.js';

export interface AlertEngineOptions {
  repository: AlertRepository;
  keyring: Keyring;
  evaluator: AlertEvaluator;
  /** Absent: events are stored, not published (a billing without a broker, e.g. tests). */
  outbox?: AlertOutbox;
  intervalMs: number;
  batchSize: number;
  clock: () => Date;
  onEvents?: (events: AlertEvent[]) => void;
  onPublished?: (result: PublishResult) => void;
  onError?: (error: unknown, step: 'evaluate' | 'publish') => void;
}

export class AlertEngine {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(private readonly options: AlertEngineOptions) {}

  /** One tick: evaluate a batch, then publish (each step's failure reported, not thrown). */
  async tick(): Promise<void> {
    const { onError = () => {} } = this.options;
    try {
      const events = await this.evaluateBatch();
      if (events.length > 0) this.options.onEvents?.(events);
    } catch (error) {
      onError(error, 'evaluate');
    }
    if (!this.options.outbox) return;
    try {
      const result = await this.options.outbox.publishPending(this.options.batchSize);
      if (result.published + result.dropped + result.undeliverable.length > 0) {
        this.options.onPublished?.(result);
      }
    } catch (error) {
      onError(error, 'publish');
    }
  }

  /** Claims and evaluates one batch of accounts; answers the new events. */
  async evaluateBatch(): Promise<AlertEvent[]> {
    const now = this.options.clock();
    const notSince = new Date(now.getTime() - this.options.intervalMs);
    const rows = await this.options.repository.claimDue(now, notSince, this.options.batchSize);
    const events: AlertEvent[] = [];
    for (const row of rows) {
      // One account that cannot be evaluated (settings that no longer open, a failed query)
      // must not hold back the others of its batch, already stamped as evaluated.
      try {
        const settings = openSettings(this.options.keyring, row);
        events.push(...(await this.options.evaluator.evaluate(settings, now)));
      } catch (error) {
        this.options.onError?.(error, 'evaluate');
      }
    }
    return events;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.schedule(this.options.intervalMs);
      });
    }, delayMs);
    this.timer.unref();
  }

  /** Stops the loop and waits for a tick in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
