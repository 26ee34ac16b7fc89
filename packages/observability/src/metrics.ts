import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface ServiceMetrics {
  registry: Registry;
  httpRequestDurationSeconds: Histogram<'method' | 'route' | 'status'>;
}

/** `inference-worker` → `inference_worker`: Prometheus names allow no dashes. */
export const metricPrefix = (service: string): string => service.replace(/[^a-zA-Z0-9_]/g, '_');

/**
 * One registry per service instance (not the global one), so several services can share a
 * process in local mode without their metrics colliding.
 */
export function createServiceMetrics(
  service: string,
  options: { defaultMetrics?: boolean } = {},
): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const httpRequestDurationSeconds = new Histogram({
    name: `${metricPrefix(service)}_http_request_duration_seconds`,
    help: 'HTTP request duration by route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  return { registry, httpRequestDurationSeconds };
}

/**
 * Items per batch call to billing (admissions, settlements, voids), by kind: how far natural
 * batching groups the request path's calls at the load the service sees. The caller's
 * BillingClient reports each batch it sends (`onBatch`).
 */
export function billingBatchSizes(
  registry: Registry,
  service: string,
): (kind: string, size: number) => void {
  const histogram = new Histogram({
    name: `${metricPrefix(service)}_billing_batch_items`,
    help: 'Items per batch call to billing, by kind (admissions, settlements, voids)',
    labelNames: ['kind'] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers: [registry],
  });
  return (kind, size) => histogram.observe({ kind }, size);
}

/**
 * `billing_settled_micro_dzd_total`: µDZD charged by the hold settlements this process made (a
 * replayed settlement adds nothing). Billing counts the ones its API applies, the inference
 * worker the ones it applies in the ledger itself (ADR 0070); `sum(...)` over both is the money
 * settled, whichever path a settlement took.
 */
export function settledMicroDzdCounter(registry: Registry): Counter {
  return new Counter({
    name: 'billing_settled_micro_dzd_total',
    help: 'Micro-dinar charged by hold settlements made by this process',
    registers: [registry],
  });
}

/** A gauge of a figure the process already keeps (`read`), taken when scraped: nothing per event. */
export function sampledGauge(
  registry: Registry,
  name: string,
  help: string,
  read: () => number,
): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}
