/**
 * Groups work that queues up while earlier work runs: with nothing in flight an item goes at
 * once, alone (no added latency when idle); items submitted while `maxInFlight` batches run
 * wait and leave together, at most `maxBatchSize` per batch, as soon as a batch finishes. Each
 * caller gets its own result; a batch that fails as a whole fails each of its callers.
 */
export interface BatcherOptions {
  maxBatchSize: number;
  maxInFlight: number;
}

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

export class Batcher<I, O> {
  private readonly queue: Waiting<I, O>[] = [];
  private inFlight = 0;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: BatcherOptions,
  ) {
    for (const [name, value] of Object.entries(options)) {
      if (!Number.isSafeInteger(value) || value < 1) {
        throw new RangeError(`${name} must be a positive integer`);
      }
    }
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatchSize);
      this.inFlight += 1;
      this.run(batch.map((waiting) => waiting.item))
        .then(
          (results) => batch.forEach((waiting, i) => waiting.resolve(results[i] as O)),
          (error: unknown) => batch.forEach((waiting) => waiting.reject(error)),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.pump();
        });
    }
  }
}
