/**
 * Expiry of pending holds past their TTL, and release of holds whose job was never published
 * (edge died between admission and publish) once their publish grace has passed. Several
 * replicas may sweep at once: holds are locked with SKIP LOCKED, so each is expired exactly
 * once, in batches that keep transactions short.
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
  /** The monotonic clock in ms (default performance.now); tests move it to stage a stall. */
  monotonicNowMs?: () => number;
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

/**
 * Holds placed before this and still unmarked are released. Only once this process has been
 * awake a whole grace: marks sent while billing was stopped, paused or unreachable arrive
 * after it resumes, and the sweeper must not beat them (an unmarked hold may belong to a
 * running job whose mark edge defers, and releasing it would leave its answer unbilled).
 */
function unmarkedBefore(deps: SweepDeps, now: Date, awakeForMs: number): Date {
  const graceMs = deps.publishGraceMs;
  if (graceMs === undefined || awakeForMs < graceMs) return new Date(0);
  return new Date(now.getTime() - graceMs);
}

async function expireBatch(
  deps: SweepDeps,
  tx: LedgerTx,
  now: Date,
  awakeForMs: number,
): Promise<number> {
  const { store } = deps;
  const unpublishedBefore = unmarkedBefore(deps, now, awakeForMs);
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
  const marked = await store.markHoldsExpired(tx, ids, deps.clock(), now);
  if (marked !== expired.length) throw new Error('expired holds changed under their lock');
  return expired.length;
}

/**
 * Expires pending holds whose expiry is at or before `now`, and unmarked ones past their grace
 * when the sweeping process has been awake `awakeForMs` (at least the grace); returns how many.
 */
export async function expireHoldsWith(
  deps: SweepDeps,
  now: Date,
  awakeForMs = Number.POSITIVE_INFINITY,
): Promise<number> {
  requireDate('now', now);
  let total = 0;
  for (;;) {
    const count = await deps.store.transaction((tx) => expireBatch(deps, tx, now, awakeForMs));
    total += count;
    if (count < deps.batchSize) return total;
  }
}

/**
 * Runs `expire` every intervalMs; returns stop(). `awakeForMs` is how long the process has run
 * without a stall: it starts at 0, and a tick that fires more than an interval late (the
 * process was stopped or starved) starts it again. Measured on the monotonic clock.
 */
export function startSweeperWith(
  expire: (now: Date, awakeForMs: number) => Promise<number>,
  clock: () => Date,
  options: SweeperOptions,
): () => Promise<void> {
  if (!Number.isSafeInteger(options.intervalMs) || options.intervalMs <= 0) {
    throw new RangeError('intervalMs must be a positive integer');
  }
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const nowMs = options.monotonicNowMs ?? (() => performance.now());
  let awakeSinceMs = nowMs();
  const sweep = async () => {
    try {
      // Expired idempotency records (credits included) are purged by billing's idempotency
      // purge (RequestIdempotency.purgeExpired), which covers every scope.
      const count = await expire(clock(), nowMs() - awakeSinceMs);
      if (count > 0) options.onExpired?.(count);
    } catch (error) {
      options.onError?.(error);
    }
  };
  const schedule = () => {
    const dueAtMs = nowMs() + options.intervalMs;
    timer = setTimeout(() => {
      if (nowMs() - dueAtMs > options.intervalMs) awakeSinceMs = nowMs();
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
