import type { ServiceMetrics } from '@gateway/observability';

/**
 * The dispatcher's Prometheus metrics, registered on the service registry.
 *
 * prom-client is not a dependency of this service (only of @gateway/observability, which
 * exports no metric constructors), so these implement the small interface the registry
 * reads when it renders: `name`, `help`, `type`, `aggregator`, `get()` and `reset()`.
 */

type Registry = ServiceMetrics['registry'];
type RegistrableMetric = Parameters<Registry['registerMetric']>[0];

interface MetricSnapshot {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  aggregator: 'sum';
  values: { value: number; labels: Record<string, string> }[];
}

abstract class CustomMetric {
  readonly aggregator = 'sum';
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge',
  ) {}

  abstract get(): Promise<MetricSnapshot>;
  abstract reset(): void;

  register(registry: Registry): this {
    registry.registerMetric(this as unknown as RegistrableMetric);
    return this;
  }
}

export class LabelledCounter<L extends string> extends CustomMetric {
  private readonly counts = new Map<L, number>();

  constructor(
    name: string,
    help: string,
    private readonly labelName: string,
  ) {
    super(name, help, 'counter');
  }

  inc(label: L, amount = 1): void {
    this.counts.set(label, (this.counts.get(label) ?? 0) + amount);
  }

  async get(): Promise<MetricSnapshot> {
    const values = [...this.counts].map(([label, value]) => ({
      value,
      labels: { [this.labelName]: label },
    }));
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
  }

  reset(): void {
    this.counts.clear();
  }
}

export class PlainCounter extends CustomMetric {
  private count = 0;

  constructor(name: string, help: string) {
    super(name, help, 'counter');
  }

  inc(amount = 1): void {
    this.count += amount;
  }

  async get(): Promise<MetricSnapshot> {
    const values = [{ value: this.count, labels: {} }];
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
  }

  reset(): void {
    this.count = 0;
  }
}

/** A gauge read when scraped; a failed read reports the last value seen. */
export class CollectedGauge extends CustomMetric {
  private last = 0;

  constructor(
    name: string,
    help: string,
    private readonly read: () => Promise<number>,
  ) {
    super(name, help, 'gauge');
  }

  async get(): Promise<MetricSnapshot> {
    this.last = await this.read().catch(() => this.last);
    const values = [{ value: this.last, labels: {} }];
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
  }

  reset(): void {
    this.last = 0;
  }
}

export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'dropped';

export interface DispatcherMetrics {
  attempts: LabelledCounter<AttemptOutcome>;
  purgedPayloads: PlainCounter;
}

export function createDispatcherMetrics(
  registry: Registry,
  dueDeliveries: () => Promise<number>,
): DispatcherMetrics {
  new CollectedGauge(
    'dispatcher_deliveries_due',
    'Deliveries whose next attempt is due now',
    dueDeliveries,
  ).register(registry);
  return {
    attempts: new LabelledCounter<AttemptOutcome>(
      'dispatcher_webhook_attempts_total',
      'Webhook delivery attempts by outcome',
      'outcome',
    ).register(registry),
    purgedPayloads: new PlainCounter(
      'dispatcher_purged_payloads_total',
      'Stored webhook results deleted after their retention',
    ).register(registry),
  };
}
