import type { BusLogger, Delivery, Handler, Outcome } from './bus.js';
import type { QueueDeclaration } from './topology-plan.js';

/**
 * What to do with a delivery once its handler decided; shared so both buses agree exactly.
 * `dead-letter` means "reject without requeue": the queue's dead-letter exchange takes it to
 * `<queue>.dead`, or, for a queue without one (transient), the message is dropped.
 */
export type Settlement =
  | { kind: 'ack' }
  | { kind: 'requeue' }
  | { kind: 'dead-letter' }
  | { kind: 'retry'; queue: string; retries: number };

const OUTCOMES: readonly string[] = ['ack', 'requeue', 'retry', 'dead-letter'];

export function settlementFor(
  outcome: Outcome,
  retries: number,
  queue: QueueDeclaration | undefined,
): Settlement {
  if (outcome !== 'retry') return { kind: outcome };
  // No retry queue, or retries used up: the message has had its chances.
  const retry = queue?.retry;
  if (!retry || retries >= retry.maxRetries) return { kind: 'dead-letter' };
  return { kind: 'retry', queue: retry.queue, retries: retries + 1 };
}

/** Runs a handler; a throw or a non-Outcome result counts as `requeue`, never a crash. */
export async function decide<T>(
  handler: Handler<T>,
  delivery: Delivery<T>,
  logger: BusLogger,
): Promise<Outcome> {
  const context = describe(delivery);
  try {
    const outcome = await handler(delivery);
    if (OUTCOMES.includes(outcome)) return outcome;
    logger.warn({ ...context, outcome: String(outcome) }, 'handler returned no outcome; requeue');
  } catch (error) {
    logger.error({ ...context, err: errorSummary(error) }, 'handler failed; requeue');
  }
  return 'requeue';
}

/** What may be logged about a delivery: never its body or headers (prompts, user data). */
export function describe(delivery: Delivery<unknown>): Record<string, unknown> {
  return {
    queue: delivery.queue,
    messageId: delivery.messageId,
    deliveryCount: delivery.deliveryCount,
    retries: delivery.retries,
  };
}

export function errorSummary(error: unknown): { name: string; message: string; stack?: string } {
  if (error instanceof Error)
    return { name: error.name, message: error.message, stack: error.stack };
  return { name: 'NonError', message: String(error) };
}
