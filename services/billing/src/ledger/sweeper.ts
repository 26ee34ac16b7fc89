/**
 * Expiry of pending holds past their TTL, and release of holds whose job was never published
 * (edge died between admission and publish) once their publish grace has passed. Several replicas may sweep at once: holds are locked
 * with SKIP LOCKED, so each is expired exactly once, in batches that keep transactions short.
 */
import type { LedgerStore, LedgerTx } from './prisma-store.js';
import type { ExpiredHold } from './store.js';
import { requireDate } from './validation.js';

export interface SweeperOptions {
  intervalMs: number;
  /** Called after each sweep that expired at least one hold. */
  onExpired?: (count: number) => void;
  /** Called when a sweep fails; the sweeper keeps running. */
  onError?: (error: unknown) => void;
}

export interface SweepDeps {
  store: LedgerStore;
  clock: () => Date;
  /** Holds expired per transaction. */
  batchSize: number;
  /** A hold not marked published this long after it was placed is released; never if unset. */
  publishGraceMs: number | undefined;
}

function addTo(totals: Map<string, bigint>, key: string, amount: bigint): void {
  totals.set(key, (totals.get(key) ?? 0n) + amount);
}

async function expireBatch(deps: SweepDeps, tx: LedgerTx, now: Date): Promise<number> {
  const { store } = deps;
  const unpublishedBefore = new Date(
    deps.publishGraceMs === undefined ? 0 : now.getTime() - deps.publishGraceMs,
  );
  const expired: ExpiredHold[] = await store.lockExpiredHolds(
    tx,
    now,
    deps.batchSize,
    unpublishedBefore,
  );
  if (expired.length === 0) return 0;
  const perAccount = new Map<string, bigint>();
  const perToken = new Map<string, bigint>();
  for (const hold of expired) {
    addTo(perAccount, hold.accountId, hold.amountMicroDzd);
    if (hold.scopedTokenId !== null) addTo(perToken, hold.scopedTokenId, hold.amountMicroDzd);
  }
  await store.releaseExpired(tx, perAccount, perToken);
  const ids = expired.map((hold) => hold.id);
  const marked = await store.markHoldsExpired(tx, ids, deps.clock());
  if (marked !== expired.length) throw new Error('expired holds changed under their lock');
  return expired.length;
}

/** Expires pending holds whose expiry is at or before `now`; returns how many. */
export async function expireHoldsWith(deps: SweepDeps, now: Date): Promise<number> {
  requireDate('now', now);
  let total = 0;
  for (;;) {
    const count = await deps.store.transaction((tx) => expireBatch(deps, tx, now));
    total += count;
    if (count < deps.batchSize) return total;
  }
}

/** Runs `expire` every intervalMs; returns stop(). */
export function startSweeperWith(
  expire: (now: Date) => Promise<number>,
  clock: () => Date,
  options: SweeperOptions,
): () => Promise<void> {
  if (!Number.isSafeInteger(options.intervalMs) || options.intervalMs <= 0) {
    throw new RangeError('intervalMs must be a positive integer');
  }
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const sweep = async () => {
    try {
      // Expired idempotency records (credits included) are purged by billing's idempotency
      // purge (RequestIdempotency.purgeExpired), which covers every scope.
      const count = await expire(clock());
      if (count > 0) options.onExpired?.(count);
    } catch (error) {
      options.onError?.(error);
    }
  };
  const schedule = () => {
    timer = setTimeout(() => {
      running = sweep().finally(() => {
        running = undefined;
        if (!stopped) schedule();
      });
    }, options.intervalMs);
    timer.unref();
  };
  schedule();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
