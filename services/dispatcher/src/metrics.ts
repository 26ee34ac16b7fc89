import { Counter, Gauge, type Registry } from 'prom-client';

/** The dispatcher's Prometheus metrics, registered on the service registry. */

export interface DispatcherMetrics {
  /** By outcome: delivered, retry, failed or dropped. */
  attempts: Counter<'outcome'>;
  purgedPayloads: Counter;
}

export function createDispatcherMetrics(
  registry: Registry,
  dueDeliveries: () => Promise<number>,
): DispatcherMetrics {
  let lastDue = 0;
  new Gauge({
    name: 'dispatcher_deliveries_due',
    help: 'Deliveries whose next attempt is due now',
    registers: [registry],
    // Read from the database when scraped; a failed read reports the last value seen, so a
    // database hiccup never fails the whole scrape.
    async collect() {
      lastDue = await dueDeliveries().catch(() => lastDue);
      this.set(lastDue);
    },
  });
  return {
    attempts: new Counter({
      name: 'dispatcher_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    purgedPayloads: new Counter({
      name: 'dispatcher_purged_payloads_total',
      help: 'Stored webhook results deleted after their retention',
      registers: [registry],
    }),
  };
}
