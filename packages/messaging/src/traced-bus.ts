import {
  contextFromHeaders,
  injectTraceContext,
  SpanKind,
  tracingEnabled,
  withSpan,
} from '@gateway/observability';
import type { Destination, Handler, MessageBus, PublishOptions } from './bus.js';

/*
 * Trace context across the queue: a published message carries the publisher's `traceparent` as
 * an application header, and its handler runs in a CONSUMER span that is that context's child
 * (OpenTelemetry's messaging conventions). So one request's spans in edge, the worker, billing
 * and the dispatcher make one trace. Off (the bus itself) while tracing is off.
 */

function destinationName(to: Destination): string {
  return 'queue' in to ? to.queue : `${to.exchange}/${to.routingKey}`;
}

async function publishTraced(
  bus: MessageBus,
  to: Destination,
  body: unknown,
  options: PublishOptions = {},
): Promise<void> {
  const name = destinationName(to);
  await withSpan(
    `send ${name}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: { 'messaging.system': 'rabbitmq', 'messaging.destination.name': name },
    },
    async () => {
      const trace: Record<string, string> = {};
      injectTraceContext(trace);
      await bus.publish(to, body, { ...options, headers: { ...options.headers, ...trace } });
    },
  );
}

function consumeTraced<T>(queue: string, handler: Handler<T>): Handler<T> {
  return (delivery) =>
    withSpan(
      `process ${queue}`,
      {
        kind: SpanKind.CONSUMER,
        parent: contextFromHeaders(delivery.headers),
        attributes: {
          'messaging.system': 'rabbitmq',
          'messaging.destination.name': queue,
          'messaging.message.delivery_count': delivery.deliveryCount,
        },
      },
      async (span) => {
        const outcome = await handler(delivery);
        span.setAttribute('messaging.outcome', outcome);
        return outcome;
      },
    );
}

/** `bus` with trace context carried in message headers while tracing is on; `bus` itself if not. */
export function traceBus(bus: MessageBus): MessageBus {
  if (!tracingEnabled()) return bus;
  return {
    start: () => bus.start(),
    declareQueue: (spec, declareOptions) => bus.declareQueue(spec, declareOptions),
    publish: (to, body, options) => publishTraced(bus, to, body, options),
    consume: (queue, handler, options) =>
      bus.consume(queue, consumeTraced(queue, handler), options),
    isHealthy: () => bus.isHealthy(),
    close: () => bus.close(),
  };
}
