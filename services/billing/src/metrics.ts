import type { ServiceMetrics } from '@gateway/observability';
import type { PrismaClient } from './db/client.js';
import type { LedgerService } from './ledger/index.js';

/*
 * Billing's own Prometheus metrics, on the service registry (the dashboard and the alert rules
 * in infra/ read them):
 *
 * - `billing_holds_open`: pending holds, counted in the database when scraped (so every replica
 *   reports the same figure; aggregate with max).
 * - `billing_settled_micro_dzd_total`: µDZD charged by settlements this process made (a replayed
 *   settle adds nothing); `increase(...) / 1e6` is DZD.
 * - `billing_ledger_invariant_violations`: how many violations the ledger's invariant check found,
 *   run at most once per INVARIANT_CHECK_INTERVAL_MS per replica (it reads the whole ledger).
 * - `billing_hold_sweeper_lag_seconds`: how long the most overdue pending hold has been past its
 *   expiry; 0 when none is. A working sweeper keeps it under its interval.
 *
 * prom-client is not a dependency of billing (only of @gateway/observability, which exports no
 * metric classes), so these implement what the registry reads when it renders: `name`, `help`,
 * `type`, `aggregator`, `get()` and `reset()`. A failed read reports the last value seen, so a
 * database hiccup never fails the whole scrape.
 */

type Registry = ServiceMetrics['registry'];
type RegistrableMetric = Parameters<Registry['registerMetric']>[0];

/** The invariant check scans the ledger: at most this often per replica. */
export const INVARIANT_CHECK_INTERVAL_MS = 60_000;

class ScrapedValue {
  readonly aggregator: 'sum' | 'max';
  private last = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge',
    private readonly read: () => Promise<number>,
  ) {
    // Database-wide gauges are the same on every replica: summing them would multiply them.
    this.aggregator = type === 'counter' ? 'sum' : 'max';
  }

  async get() {
    this.last = await this.read().catch(() => this.last);
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [{ value: this.last, labels: {} }],
    };
  }

  reset(): void {
    this.last = 0;
  }
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
  ledger: LedgerService;
  /** Milliseconds since the epoch; injected for tests. */
  now?: () => number;
  invariantCheckIntervalMs?: number;
}

/**
 * Registers billing's metrics and returns the ledger service to use in their place: the same
 * service, whose settlements are counted.
 */
export function instrumentBilling(registry: Registry, deps: BillingMetricsDeps): LedgerService {
  const { prisma, ledger } = deps;
  let settledMicroDzd = 0n;

  const metrics = [
    new ScrapedValue('billing_holds_open', 'Pending holds (all accounts)', 'gauge', async () => {
      const rows = await prisma.$queryRaw<{ open: number }[]>`
        SELECT count(*)::int AS open FROM holds WHERE status = 'pending'`;
      return rows[0]?.open ?? 0;
    }),
    new ScrapedValue(
      'billing_settled_micro_dzd_total',
      'Micro-dinar charged by hold settlements made by this process',
      'counter',
      async () => Number(settledMicroDzd),
    ),
    new ScrapedValue(
      'billing_ledger_invariant_violations',
      'Violations found by the last ledger invariant check',
      'gauge',
      atMostEvery(
        deps.invariantCheckIntervalMs ?? INVARIANT_CHECK_INTERVAL_MS,
        deps.now ?? Date.now,
        async () => (await ledger.checkInvariants()).violations.length,
      ),
    ),
    new ScrapedValue(
      'billing_hold_sweeper_lag_seconds',
      'Seconds the most overdue pending hold has been past its expiry (0 when none)',
      'gauge',
      async () => {
        const rows = await prisma.$queryRaw<{ lag: number }[]>`
          SELECT COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(expires_at)), 0)::float8 AS lag
          FROM holds WHERE status = 'pending' AND expires_at < clock_timestamp()`;
        return Math.max(0, rows[0]?.lag ?? 0);
      },
    ),
  ];
  for (const metric of metrics) registry.registerMetric(metric as unknown as RegistrableMetric);

  return {
    ...ledger,
    settleHold: async (holdId, usage) => {
      const result = await ledger.settleHold(holdId, usage);
      if (!result.replayed) settledMicroDzd += result.costMicroDzd;
      return result;
    },
  };
}
