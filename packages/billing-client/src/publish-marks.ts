import { MAX_PUBLISH_MARKS, type PublishMarksRequest } from '@gateway/contracts';

type Mark = PublishMarksRequest['holds'][number];

interface Pending {
  expiresAtMs: number;
  waiters: { resolve: (published: boolean) => void; reject: (error: unknown) => void }[];
}

/**
 * Group commit for publish marks: one call to billing at a time; marks that arrive while it runs
 * go together in the next one. An idle edge sends each mark at once (no added delay); a busy one
 * sends one call (one PostgreSQL statement) per batch instead of one per job — a call and a
 * statement per job were a third of billing's work per request. The mark is not on the
 * answer's path (edge does not await it), so batching costs the client nothing.
 */
export class PublishMarks {
  #pending = new Map<string, Pending>();
  #inFlight: Promise<void> | null = null;

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

  /** Waits until every mark made so far was sent (shutdown). */
  async flush(): Promise<void> {
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
