/*
 * Edge's "job published" marks to billing: group-committed, and for synchronous jobs deferred
 * so that a job which ends first never needs one.
 */
import { MAX_PUBLISH_MARKS } from '@gateway/contracts';
import type { PublishMarksRequest } from '@gateway/contracts';

type Mark = PublishMarksRequest['holds'][number];

interface Pending {
  expiresAtMs: number;
  waiters: { resolve: (published: boolean) => void; reject: (error: unknown) => void }[];
}

/** A mark not sent yet (`PublishMarks.markLater`). */
export interface DeferredMark {
  /** Resolves as `mark` does once sent; false when withdrawn (the hold ended first). */
  readonly sent: Promise<boolean>;
  /** The hold is final: the mark would change nothing, so it is never sent. */
  withdraw(): void;
}

interface Waiting {
  timer: NodeJS.Timeout;
  send(): void;
}

/**
 * Group commit for publish marks: one call to billing at a time; marks that arrive while it runs
 * go together in the next one. An idle edge sends each mark at once (no added delay); a busy one
 * sends one call (one PostgreSQL statement) per batch instead of one per job. The mark is not on
 * the answer's path (edge does not await it), so batching costs the client nothing.
 */
export class PublishMarks {
  #pending = new Map<string, Pending>();
  #inFlight: Promise<void> | null = null;
  readonly #waiting = new Set<Waiting>();

  constructor(private readonly send: (marks: Mark[]) => Promise<Set<string>>) {}

  /** Resolves true when billing marked the hold, false when it was already final. */
  mark(holdId: string, expiresAtMs: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const pending = this.#pending.get(holdId);
      if (pending) {
        pending.expiresAtMs = Math.max(pending.expiresAtMs, expiresAtMs);
        pending.waiters.push({ resolve, reject });
      } else {
        this.#pending.set(holdId, { expiresAtMs, waiters: [{ resolve, reject }] });
      }
      this.#inFlight ??= this.#drain();
    });
  }

  /**
   * The mark, sent after `delayMs` unless withdrawn first. A synchronous chat job usually ends
   * (settled) within milliseconds; its hold then needs no mark, and the call and statement a
   * mark costs are saved. `delayMs` must stay well below billing's publish grace, or a long job
   * could lose its hold. `flush` sends what still waits (shutdown).
   */
  markLater(holdId: string, expiresAtMs: number, delayMs: number): DeferredMark {
    let resolveSent!: (sent: boolean | Promise<boolean>) => void;
    const sent = new Promise<boolean>((resolve) => (resolveSent = resolve));
    const waiting: Waiting = {
      timer: setTimeout(() => waiting.send(), delayMs),
      send: () => {
        if (!this.#waiting.delete(waiting)) return;
        clearTimeout(waiting.timer);
        resolveSent(this.mark(holdId, expiresAtMs));
      },
    };
    // A waiting mark never keeps a process alive: shutdown sends it through `flush`.
    waiting.timer.unref();
    this.#waiting.add(waiting);
    return {
      sent,
      withdraw: () => {
        if (!this.#waiting.delete(waiting)) return;
        clearTimeout(waiting.timer);
        resolveSent(false);
      },
    };
  }

  /** Marks still waiting (a gauge for tests and metrics). */
  get waiting(): number {
    return this.#waiting.size;
  }

  /** Sends the waiting marks now and waits until every mark made so far was sent (shutdown). */
  async flush(): Promise<void> {
    for (const waiting of [...this.#waiting]) waiting.send();
    while (this.#inFlight) await this.#inFlight;
  }

  async #drain(): Promise<void> {
    // Let the marks of this tick join the first call.
    await Promise.resolve();
    while (this.#pending.size > 0) {
      const batch = [...this.#pending].slice(0, MAX_PUBLISH_MARKS);
      for (const [holdId] of batch) this.#pending.delete(holdId);
      try {
        const published = await this.send(
          batch.map(([holdId, { expiresAtMs }]) => ({ holdId, expiresAtMs })),
        );
        for (const [holdId, { waiters }] of batch) {
          for (const waiter of waiters) waiter.resolve(published.has(holdId));
        }
      } catch (error) {
        for (const [, { waiters }] of batch) for (const waiter of waiters) waiter.reject(error);
      }
    }
    this.#inFlight = null;
  }
}
