/** One item's answer inside a batch: its value, or the error that item alone failed with. */
export type ItemResult<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface GroupCommitOptions<T, R> {
  /** Items per call at most (the contract's limit). */
  maxBatch: number;
  /** One call for the batch; a rejection fails every item of it. */
  send: (batch: [key: string, item: T][]) => Promise<Map<string, ItemResult<R>>>;
  /** Two submissions for the same key while it waits become one item (default: the first). */
  merge?: (waiting: T, next: T) => T;
}

interface Pending<T, R> {
  item: T;
  waiters: { resolve: (value: R) => void; reject: (error: unknown) => void }[];
}

/**
 * Group commit: one call to billing at a time; items that arrive while it runs go together in
 * the next one. An idle caller sends each item at once (no added delay); a busy one sends one
 * call (and one PostgreSQL statement) per batch instead of one per job. On loopback, each
 * message costs its sender a `writev` and wakes its receiver: the message count, not the bytes,
 * was most of billing's and the worker's CPU per request (README, "Benchmarks").
 */
export class GroupCommit<T, R> {
  #pending = new Map<string, Pending<T, R>>();
  #inFlight: Promise<void> | null = null;

  constructor(private readonly options: GroupCommitOptions<T, R>) {}

  submit(key: string, item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      const pending = this.#pending.get(key);
      if (pending) {
        pending.item = this.options.merge ? this.options.merge(pending.item, item) : pending.item;
        pending.waiters.push({ resolve, reject });
      } else {
        this.#pending.set(key, { item, waiters: [{ resolve, reject }] });
      }
      this.#inFlight ??= this.#drain();
    });
  }

  /** Waits until every item submitted so far was sent (shutdown). */
  async flush(): Promise<void> {
    while (this.#inFlight) await this.#inFlight;
  }

  async #drain(): Promise<void> {
    // Let the items of this tick join the first call.
    await Promise.resolve();
    while (this.#pending.size > 0) {
      const batch = [...this.#pending].slice(0, this.options.maxBatch);
      for (const [key] of batch) this.#pending.delete(key);
      let results: Map<string, ItemResult<R>>;
      try {
        results = await this.options.send(batch.map(([key, { item }]) => [key, item]));
      } catch (error) {
        for (const [, { waiters }] of batch) for (const waiter of waiters) waiter.reject(error);
        continue;
      }
      for (const [key, { waiters }] of batch) {
        const result = results.get(key) ?? {
          ok: false,
          error: new Error(`billing answered nothing for ${key}`),
        };
        for (const waiter of waiters) {
          if (result.ok) waiter.resolve(result.value);
          else waiter.reject(result.error);
        }
      }
    }
    this.#inFlight = null;
  }
}
