import type { InferenceReplyPayload } from '@gateway/contracts';

/** Out-of-order replies held back at most; a job never has that many chunks in flight. */
const MAX_HELD_BACK = 4096;

type Waiter = {
  resolve: (reply: InferenceReplyPayload | 'timeout') => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
};

/**
 * The replies of one job, handed out in `seq` order (0, 1, 2...) whatever order they arrived in;
 * a repeated `seq` (a redelivered message) is dropped. `next` waits a bounded time.
 */
export class ReplySequence {
  #expected = 0;
  readonly #heldBack = new Map<number, InferenceReplyPayload>();
  readonly #ready: InferenceReplyPayload[] = [];
  #waiter: Waiter | null = null;
  /** Set once closed: builds the reason (an Error is built only if someone is told). */
  #closed: (() => Error) | null = null;

  push(reply: InferenceReplyPayload): void {
    if (this.#closed || reply.seq < this.#expected || this.#heldBack.has(reply.seq)) return;
    if (this.#heldBack.size >= MAX_HELD_BACK) return;
    this.#heldBack.set(reply.seq, reply);
    for (let next = this.#heldBack.get(this.#expected); next;) {
      this.#heldBack.delete(this.#expected);
      this.#ready.push(next);
      this.#expected += 1;
      next = this.#heldBack.get(this.#expected);
    }
    this.#wake();
  }

  /** The next reply in order, or 'timeout' when none came within `timeoutMs`. */
  next(timeoutMs: number): Promise<InferenceReplyPayload | 'timeout'> {
    if (this.#closed) return Promise.reject(this.#closed());
    const ready = this.#ready.shift();
    if (ready) return Promise.resolve(ready);
    if (this.#waiter) return Promise.reject(new Error('one reader at a time'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = null;
        resolve('timeout');
      }, timeoutMs);
      this.#waiter = { resolve, reject, timer };
    });
  }

  /**
   * Starts over from seq 0 for another run of the job (a waiting reader keeps waiting); the
   * replies of the old run not read yet are dropped.
   */
  restart(): void {
    this.#expected = 0;
    this.#heldBack.clear();
    this.#ready.length = 0;
  }

  /**
   * Ends the sequence: a pending and every later `next` rejects with `reason()`. Lazy because
   * every finished job closes its sequence and almost never has a reader left to tell (an
   * Error per job, with its stack, was 1 % of edge's CPU).
   */
  close(reason: () => Error): void {
    this.#closed ??= reason;
    const waiter = this.#waiter;
    this.#waiter = null;
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.reject(reason());
    }
  }

  #wake(): void {
    const waiter = this.#waiter;
    const ready = waiter ? this.#ready.shift() : undefined;
    if (!waiter || !ready) return;
    this.#waiter = null;
    clearTimeout(waiter.timer);
    waiter.resolve(ready);
  }
}
