/**
 * Natural batching (billing's clients, billing's own settlement statements, the dispatcher's
 * inserts and attempt records): a call made while fewer than `maxInFlight` batches are
 * running is sent at once (an idle caller sends batches of one, with no added delay); calls made
 * while they all run wait, and go together in the next batch as soon as one returns. No timer:
 * a batch is exactly what queued during the previous round trip, so batches grow with the load
 * and shrink back with it. The one thing a batch costs a call is the wait for a free slot.
 * That wait is bounded: past `maxQueued` waiting calls (the callee slow or stuck, the load
 * beyond it), a new call is refused at once with a 503 the client may retry, instead of joining
 * a queue that would grow with the load for as long as the callee stays slow.
 */
import { GatewayError } from '@gateway/contracts';
import { isDependencyUnavailable } from './dependency-errors.js';

/** One item's outcome in a batch's answer. */
export type ItemResult<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** `work`'s value, or what it threw, as one item's outcome. */
export async function settled<T>(work: () => Promise<T>): Promise<ItemResult<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * A batch's `send` for work that has a one-statement form for many items: `many` for the batch,
 * and when it throws (one item's fault fails a whole statement), `one` for each item, so that
 * an item that cannot be done fails alone and never its neighbours. A batch of one goes to `one`.
 * A dependency that is unavailable (`isDependencyUnavailable`: the database down, the connection
 * cut) fails every item at once instead: each alone would only fail again, as many more calls.
 */
export function batchOrEach<I, O>(
  many: (items: I[]) => Promise<O[]>,
  one: (item: I) => Promise<O>,
): (items: I[]) => Promise<ItemResult<O>[]> {
  return async (items) => {
    if (items.length > 1) {
      const batch = await settled(() => many(items));
      if (batch.ok) return batch.value.map((value) => ({ ok: true, value }));
      if (isDependencyUnavailable(batch.error)) {
        return items.map(() => ({ ok: false, error: batch.error }));
      }
    }
    return Promise.all(items.map((item) => settled(() => one(item))));
  };
}

export interface NaturalBatcherOptions {
  /** Items per batch at most (the route's limit). */
  maxBatchSize: number;
  /** Batches running at once; more calls queue. */
  maxInFlight: number;
  /** Calls waiting for a batch at most; more are refused (`service_unavailable`). */
  maxQueued?: number;
  /** Told each batch's size as it is sent (a metric). */
  onBatch?: (size: number) => void;
}

/** The default `maxQueued`: far above what any batcher here queues while its callee answers. */
export const DEFAULT_MAX_QUEUED = 10_000;

interface Queued<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

export class NaturalBatcher<I, O> {
  readonly #send: (items: I[]) => Promise<ItemResult<O>[]>;
  readonly #options: NaturalBatcherOptions;
  #queue: Queued<I, O>[] = [];
  #inFlight = 0;
  #idle: (() => void)[] = [];

  /** `send` answers one result per item, in the items' order; if it throws, every item fails. */
  constructor(send: (items: I[]) => Promise<ItemResult<O>[]>, options: NaturalBatcherOptions) {
    for (const [name, value] of Object.entries(options)) {
      if (name !== 'onBatch' && !(Number.isSafeInteger(value) && (value as number) >= 1)) {
        throw new RangeError(`NaturalBatcher: ${name} must be a positive integer`);
      }
    }
    this.#send = send;
    this.#options = options;
  }

  submit(item: I): Promise<O> {
    if (this.#queue.length >= (this.#options.maxQueued ?? DEFAULT_MAX_QUEUED)) {
      return Promise.reject(
        new GatewayError('service_unavailable', 'Too many calls waiting; retry shortly', {
          details: { retryAfterS: 1 },
        }),
      );
    }
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#pump();
    });
  }

  /** Resolves when nothing is queued or in flight (shutdown). */
  async flush(): Promise<void> {
    if (this.#inFlight === 0 && this.#queue.length === 0) return;
    await new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  #pump(): void {
    while (this.#inFlight < this.#options.maxInFlight && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#options.maxBatchSize);
      this.#inFlight += 1;
      this.#options.onBatch?.(batch.length);
      void this.#run(batch);
    }
    if (this.#inFlight === 0 && this.#queue.length === 0) {
      for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  async #run(batch: Queued<I, O>[]): Promise<void> {
    try {
      const results = await this.#send(batch.map((queued) => queued.item));
      batch.forEach((queued, index) => {
        const result = results[index];
        if (!result) queued.reject(new Error('batch answer has no result for this item'));
        else if (result.ok) queued.resolve(result.value);
        else queued.reject(result.error);
      });
    } catch (error) {
      for (const queued of batch) queued.reject(error);
    } finally {
      this.#inFlight -= 1;
      this.#pump();
    }
  }
}
