import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { SpanKind, startTracing, withSpan, type Tracing } from '@gateway/observability';
import { uniquePrefix } from '@gateway/testing';
import { busTestTopology } from './bus-behaviour.suite.js';
import type { Delivery } from './bus.js';
import { createInProcessBus } from './in-process-bus.js';
import { gatewayNames } from './topology.js';
import { traceBus } from './traced-bus.js';

function newBus() {
  const prefix = uniquePrefix('traced');
  return {
    bus: createInProcessBus({ topology: busTestTopology(prefix) }),
    names: gatewayNames(prefix),
  };
}

describe('traceBus with tracing off', () => {
  it('is the bus itself: nothing added to messages', () => {
    const { bus } = newBus();
    expect(traceBus(bus)).toBe(bus);
  });
});

describe('traceBus with tracing on', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  beforeAll(() => {
    tracing = startTracing({ service: 'unit', exporters: [exporter] });
  });
  afterAll(() => tracing.shutdown());

  it("runs the handler in a CONSUMER span that continues the publisher's trace", async () => {
    const { bus: inner, names } = newBus();
    const bus = traceBus(inner);
    await bus.start();
    let handled!: (delivery: Delivery) => void;
    const delivered = new Promise<Delivery>((resolve) => (handled = resolve));
    await bus.consume(
      names.queues.inferenceJobs,
      async (delivery) => {
        // Work done by the handler is a child of the consumer span.
        await withSpan('handle', { kind: SpanKind.INTERNAL }, async () => {});
        handled(delivery);
        return 'ack';
      },
      { prefetch: 1 },
    );
    let requestSpan: { traceId: string; spanId: string } | undefined;
    await withSpan('request', { kind: SpanKind.SERVER }, async (span) => {
      requestSpan = span.spanContext();
      await bus.publish(
        { exchange: names.exchanges.jobs, routingKey: 'default' },
        { n: 1 },
        {
          headers: { tenant: 't-1' },
        },
      );
    });
    const delivery = await delivered;
    await bus.close();

    const spans = exporter.getFinishedSpans();
    const byName = (name: string) => spans.find((span) => span.name === name)!;
    const producer = byName(`send ${names.exchanges.jobs}/default`);
    const consumer = byName(`process ${names.queues.inferenceJobs}`);
    const handle = byName('handle');
    expect(producer.kind).toBe(SpanKind.PRODUCER);
    expect(producer.parentSpanContext?.spanId).toBe(requestSpan!.spanId);
    expect(consumer.kind).toBe(SpanKind.CONSUMER);
    expect(consumer.spanContext().traceId).toBe(requestSpan!.traceId);
    expect(consumer.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
    expect(consumer.attributes['messaging.outcome']).toBe('ack');
    expect(handle.parentSpanContext?.spanId).toBe(consumer.spanContext().spanId);
    // The message's own headers are kept; the trace context rides beside them.
    expect(delivery.headers).toEqual({
      tenant: 't-1',
      traceparent: `00-${requestSpan!.traceId}-${producer.spanContext().spanId}-01`,
    });
  });
});
