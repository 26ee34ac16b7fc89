/**
 * The worker ends its holds in billing's database itself (ADR 0070), as a role that may execute
 * `usage_settle_holds` and `usage_void_hold` and nothing else: billing's HTTP hop leaves the
 * request path. Settlements that queue up while a statement runs go together in the next one
 * (natural batching, no timer), as billing's own do; the calls, their retries and their
 * refusals are billing's, from @gateway/ledger-calls. The answers mean what billing's API
 * answers mean (`SettleOutcome`, `VoidOutcome` of @gateway/billing-client).
 */
import type { SettleOutcome, VoidOutcome } from '@gateway/billing-client';
import type { SettleRequest, VoidRequest } from '@gateway/contracts';
import {
  holdConflict,
  holdNotFound,
  holdUnpriced,
  retryStatement,
  settleHolds,
  settleRequestOf,
  settleUntilFinal,
  voidHold,
  voidReportOf,
  type SettleInput,
  type SettleOutcome as LedgerSettleOutcome,
} from '@gateway/ledger-calls';
import { SpanKind, tracingEnabled, withSpan } from '@gateway/observability';
import { NaturalBatcher } from '@gateway/runtime';
import type pg from 'pg';

/** Settlements in one statement at most (billing's own batches use the same bound). */
const SETTLE_BATCH_MAX_SIZE = 64;

export interface LedgerHoldEndsOptions {
  /** As the worker's ledger role (LEDGER_DATABASE_URL). */
  pool: pg.Pool;
  /** Settle statements running at once; settlements made meanwhile form the next batch. */
  batchMaxInFlight: number;
  /** Counts the µDZD each settlement charged (`billing_settled_micro_dzd_total`). */
  settledMicroDzd?: { inc(value: number): void };
  /** Told each settle batch's size (the `settlements` kind of the batch-size histogram). */
  onBatch?: (size: number) => void;
  clock?: () => Date;
}

export interface LedgerHoldEnds {
  settle(holdId: string, usage: SettleRequest): Promise<SettleOutcome>;
  void(holdId: string, usage?: VoidRequest): Promise<VoidOutcome>;
  /** Waits for the settlements in flight (shutdown), then closes the pool. */
  close(): Promise<void>;
}

/**
 * While tracing is on, a CLIENT span per hold end (its wait for a batch and its retries
 * included), where billing's server span was when the call went over its API.
 */
function traced<A extends unknown[], T>(
  operation: 'usage_settle_holds' | 'usage_void_hold',
  call: (...args: A) => Promise<T>,
): (...args: A) => Promise<T> {
  if (!tracingEnabled()) return call;
  const name = operation === 'usage_settle_holds' ? 'ledger settle' : 'ledger void';
  const attributes = { 'db.system.name': 'postgresql', 'db.operation.name': operation };
  return (...args) => withSpan(name, { kind: SpanKind.CLIENT, attributes }, () => call(...args));
}

export function createLedgerHoldEnds(options: LedgerHoldEndsOptions): LedgerHoldEnds {
  const { pool } = options;
  const clock = options.clock ?? (() => new Date());
  const batcher = new NaturalBatcher<SettleInput, LedgerSettleOutcome>(
    async (requests) =>
      (await settleHolds(pool, requests, clock())).map((value) => ({ ok: true, value })),
    {
      maxBatchSize: SETTLE_BATCH_MAX_SIZE,
      maxInFlight: options.batchMaxInFlight,
      ...(options.onBatch ? { onBatch: options.onBatch } : {}),
    },
  );
  return {
    settle: traced('usage_settle_holds', async (holdId: string, usage: SettleRequest) => {
      const outcome = await settleUntilFinal(
        (request) => batcher.submit(request),
        settleRequestOf(holdId, usage),
      );
      switch (outcome.outcome) {
        case 'settled':
        case 'replayed': {
          const replayed = outcome.outcome === 'replayed';
          // A double counts µDZD exactly up to 2^53 (≈ 9 billion DZD) per process lifetime.
          if (!replayed) options.settledMicroDzd?.inc(Number(outcome.costMicroDzd));
          return {
            kind: 'settled',
            costMicroDzd: outcome.costMicroDzd,
            balanceMicroDzd: outcome.balance?.balanceMicroDzd ?? 0n,
            replayed,
          };
        }
        case 'conflict':
          return { kind: 'already_final', reason: holdConflict(outcome.hold, 'settle').message };
        case 'not_found':
          throw holdNotFound(holdId);
        case 'unpriced':
          throw holdUnpriced(outcome.hold);
      }
    }),
    void: traced('usage_void_hold', async (holdId: string, usage: VoidRequest = {}) => {
      const report = voidReportOf(usage);
      const outcome = await retryStatement(() => voidHold(pool, holdId, clock(), report));
      switch (outcome.outcome) {
        case 'voided':
        case 'replayed':
          return {
            kind: outcome.hold.status === 'expired' ? 'expired' : 'voided',
            replayed: outcome.outcome === 'replayed',
          };
        case 'conflict':
          return { kind: 'already_final', reason: holdConflict(outcome.hold, 'void').message };
        case 'not_found':
          throw holdNotFound(holdId);
      }
    }),
    async close() {
      await batcher.flush();
      await pool.end();
    },
  };
}
