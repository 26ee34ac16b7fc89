import { MAX_PUBLISH_MARKS, type PublishMarksRequest } from '@gateway/contracts';
import { GroupCommit } from './group-commit.js';

type Mark = PublishMarksRequest['holds'][number];

/**
 * Publish marks, group-committed: a call and a statement per job were a third of billing's work
 * per request. The mark is not on the answer's path (edge does not await it), so batching costs
 * the client nothing.
 */
export class PublishMarks {
  readonly #commit: GroupCommit<number, boolean>;

  constructor(send: (marks: Mark[]) => Promise<Set<string>>) {
    this.#commit = new GroupCommit({
      maxBatch: MAX_PUBLISH_MARKS,
      // Marked twice while waiting: one entry, with the later expiry.
      merge: (waiting, next) => Math.max(waiting, next),
      send: async (batch) => {
        const published = await send(
          batch.map(([holdId, expiresAtMs]) => ({ holdId, expiresAtMs })),
        );
        return new Map(
          batch.map(([holdId]) => [holdId, { ok: true, value: published.has(holdId) }]),
        );
      },
    });
  }

  /** Resolves true when billing marked the hold, false when it was already final. */
  mark(holdId: string, expiresAtMs: number): Promise<boolean> {
    return this.#commit.submit(holdId, expiresAtMs);
  }

  /** Waits until every mark made so far was sent (shutdown). */
  flush(): Promise<void> {
    return this.#commit.flush();
  }
}
