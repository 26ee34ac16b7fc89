/**
 * Why a job's signal was aborted: the client went away, or the generation ran past the
 * worker's overall cap (`JOB_MAX_GENERATION_MS`). Both bill what was produced.
 */
export type AbortCause = 'cancelled' | 'generation_cap';

export class JobAborted extends Error {
  constructor(readonly abortCause: AbortCause) {
    super(`job ${abortCause}`);
  }
}

const MAX_REMEMBERED = 10_000;

/**
 * Running jobs by id, so a cancellation broadcast can abort the one running here; and recent
 * cancellations, so a job cancelled while still queued is dropped when it arrives.
 */
export class Cancellations {
  private readonly running = new Map<string, AbortController>();
  private readonly remembered = new Map<string, number>();

  constructor(private readonly memoryMs: number) {}

  register(jobId: string): AbortController {
    const controller = new AbortController();
    this.running.set(jobId, controller);
    return controller;
  }

  unregister(jobId: string): void {
    this.running.delete(jobId);
  }

  cancel(jobId: string): void {
    this.running.get(jobId)?.abort(new JobAborted('cancelled'));
    this.remember(jobId);
  }

  wasCancelled(jobId: string): boolean {
    const expiresAtMs = this.remembered.get(jobId);
    return expiresAtMs !== undefined && expiresAtMs > Date.now();
  }

  private remember(jobId: string): void {
    this.remembered.delete(jobId);
    this.remembered.set(jobId, Date.now() + this.memoryMs);
    // Oldest first (Map keeps insertion order): bounded memory whatever the cancel rate.
    for (const [id, expiresAtMs] of this.remembered) {
      if (this.remembered.size <= MAX_REMEMBERED && expiresAtMs > Date.now()) break;
      this.remembered.delete(id);
    }
  }
}
