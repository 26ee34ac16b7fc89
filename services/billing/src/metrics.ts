import { Counter, Gauge, type Registry } from 'prom-client';
import type { PrismaClient } from './db/client.js';
import type { PasswordWorkEvent } from './dashboard/password-work.js';
import type { LedgerService } from './ledger/index.js';
import {
  countCappedHolds,
  countPendingHolds,
  sweeperLagSeconds,
} from './ledger/ledger-repository.js';

/*
 * Billing's own Prometheus metrics, on the service registry (the dashboard and the alert rules
 * in infra/ read them):
 *
 * - `billing_holds_open`: pending holds, counted in the database when scraped (so every replica
 *   reports the same figure; aggregate with max).
 * - `billing_settled_micro_dzd_total`: µDZD charged by settlements this process made (a replayed
 *   settle adds nothing); `increase(...) / 1e6` is DZD. The ledger service counts them
 *   (`settledMicroDzdCounter`, @gateway/observability; the worker counts those it applies
 *   itself under the same name, ADR 0070).
 * - `billing_ledger_invariant_violations`: how many violations the ledger's invariant check found,
 *   run at most once per INVARIANT_CHECK_INTERVAL_MS per replica (it reads the whole ledger).
 * - `billing_hold_sweeper_lag_seconds`: how long the most overdue pending hold has been past its
 *   expiry; 0 when none is. A working sweeper keeps it under its interval.
 * - `billing_settlements_capped`: holds settled at their amount although the usage the node
 *   reported cost more (the hold's estimate was not an upper bound); should stay 0. Each one is
 *   also marked on the hold and in its settlement's journal reference.
 *
 * - `billing_dashboard_password_hashes_total`: scrypt hashes of dashboard passwords (sign-in
 *   checks, decoys of unknown emails included, and new passwords); ~0.1 s of a core each.
 * - `billing_dashboard_password_refusals_total`: sign-ins and invitations refused with 503
 *   because the password bulkhead was full (DASHBOARD_PASSWORD_HASHES_AT_ONCE + _QUEUE): a
 *   flood, or too small a bulkhead.
 *
 * The gauges are read when scraped; a failed read reports the last value seen, so a database
 * hiccup never fails the whole scrape.
 */

/** The invariant check scans the ledger: at most this often per replica. */
export const INVARIANT_CHECK_INTERVAL_MS = 60_000;

/** A gauge whose value is read when scraped, keeping the last value when a read fails. */
function scrapedGauge(
  registry: Registry,
  name: string,
  help: string,
  read: () => Promise<number>,
): void {
  let last = 0;
  new Gauge({
    name,
    help,
    registers: [registry],
    // Database-wide figures are the same on every replica: summing them would multiply them.
    aggregator: 'max',
    async collect() {
      last = await read().catch(() => last);
      this.set(last);
    },
  });
}

/** Runs `compute` when its last result is older than `intervalMs`; one run at a time. */
function atMostEvery(
  intervalMs: number,
  now: () => number,
  compute: () => Promise<number>,
): () => Promise<number> {
  let value = 0;
  let computedAtMs = Number.NEGATIVE_INFINITY;
  let running: Promise<number> | undefined;
  return async () => {
    if (now() - computedAtMs < intervalMs) return value;
    running ??= compute()
      .then((result) => {
        value = result;
        return result;
      })
      .finally(() => {
        // A failed check is retried after the interval too, not on every scrape.
        computedAtMs = now();
        running = undefined;
      });
    return running;
  };
}

export interface BillingMetricsDeps {
  prisma: PrismaClient;
  ledger: Pick<LedgerService, 'checkInvariants'>;
  /** Milliseconds since the epoch; injected for tests. */
  now?: () => number;
  invariantCheckIntervalMs?: number;
}

/** Registers billing's gauges (holds open, invariant violations, capped settlements, lag). */
export function instrumentBilling(registry: Registry, deps: BillingMetricsDeps): void {
  const { prisma, ledger } = deps;

  scrapedGauge(registry, 'billing_holds_open', 'Pending holds (all accounts)', () =>
    countPendingHolds(prisma),
  );
  scrapedGauge(
    registry,
    'billing_ledger_invariant_violations',
    'Violations found by the last ledger invariant check',
    atMostEvery(
      deps.invariantCheckIntervalMs ?? INVARIANT_CHECK_INTERVAL_MS,
      deps.now ?? Date.now,
      async () => (await ledger.checkInvariants()).violations.length,
    ),
  );
  scrapedGauge(
    registry,
    'billing_settlements_capped',
    'Holds settled capped at their amount: the reported usage cost more (should stay 0)',
    () => countCappedHolds(prisma),
  );
  scrapedGauge(
    registry,
    'billing_hold_sweeper_lag_seconds',
    'Seconds the most overdue pending hold has been past its expiry (0 when none)',
    () => sweeperLagSeconds(prisma),
  );
}

/** Counts the dashboard's password work: each hash, each refusal of a full bulkhead. */
export function passwordWorkMetrics(registry: Registry): (event: PasswordWorkEvent) => void {
  const hashes = new Counter({
    name: 'billing_dashboard_password_hashes_total',
    help: 'scrypt hashes of dashboard passwords (checks, decoys and new passwords)',
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'billing_dashboard_password_refusals_total',
    help: 'Sign-ins and invitations refused with 503: the password bulkhead was full',
    registers: [registry],
  });
  return (event) => (event === 'hashed' ? hashes : refusals).inc();
}
