import { setTimeout as sleep } from 'node:timers/promises';
import {
  completedEvent,
  EnvelopeError,
  GatewayError,
  holdIdOfJob,
  parseEnvelope,
  type BillingSettlementPayload,
  type CompletedEventOf,
  type InferenceReplyPayload,
} from '@gateway/contracts';
import type { Consumer, Delivery, GatewayNames, MessageBus, Outcome } from '@gateway/messaging';
import type { Logger } from '@gateway/observability';
import type { LedgerService } from '../ledger/index.js';

export interface SettlementConsumerOptions {
  bus: MessageBus;
  names: GatewayNames;
  ledger: Pick<
    LedgerService,
    'settleHold' | 'voidHold' | 'refundHold' | 'getHold' | 'answerDelivered'
  >;
  logger: Logger;
  /** Settlements applied at once (the ledger batches them). */
  prefetch?: number;
  /** Pause between tries while the database fails, doubling up to `maxBackoffMs`. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

const DEFAULT_PREFETCH = 32;

/**
 * Applies the settlements workers queued while billing did not answer (`billing.settlements`,
 * docs/job-protocol.md §5), with the same idempotent settle and void as the HTTP routes, and
 * refunds the answers nobody read (`billing.unread-replies`, below). A message is acknowledged
 * only once the ledger answered for it: applied, replayed (a duplicate message), or refused for
 * good (the hold was final already, unknown, unpriced). While the database fails it is retried
 * in place with backoff, never dropped; on shutdown it goes back to the queue.
 */
export async function startSettlementConsumer(
  options: SettlementConsumerOptions,
): Promise<Consumer> {
  const { bus, names } = options;
  let stopping = false;
  const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
  const consumers = [
    await bus.consume(
      names.queues.billingSettlements,
      (delivery) => handle(delivery, options, () => stopping),
      { prefetch },
    ),
    await bus.consume(
      names.queues.unreadReplies,
      (delivery) => handleUnread(delivery, options, () => stopping),
      { prefetch },
    ),
  ];
  return {
    async cancel() {
      stopping = true;
      await Promise.all(consumers.map((consumer) => consumer.cancel()));
    },
  };
}

/**
 * Edge's reply queue dead-letters a reply nobody read in time to `billing.unread-replies` (its
 * edge is gone; services/edge/src/jobs/job-replies.ts). When the FIRST reply of an answer (`seq`
 * 0: a non-streamed answer's final reply, or a stream's first chunk) went unread, nothing of the
 * answer reached the client, so its charge is refunded (docs/adr/0026-billing-policy-for-failure-paths.md).
 * A stream whose first chunk was read keeps its charge: its chunks were relayed; a later reply
 * arriving here changes nothing. Error replies charged nothing. Nor is the copy refunded whose
 * answer edge marked delivered: edge read it, but its acknowledgement was lost with its channel.
 */
async function handleUnread(
  delivery: Delivery,
  options: SettlementConsumerOptions,
  stopping: () => boolean,
): Promise<Outcome> {
  let reply: InferenceReplyPayload;
  try {
    reply = parseEnvelope('inference.reply', delivery.body).payload;
  } catch (error) {
    if (!(error instanceof EnvelopeError)) throw error;
    options.logger.error({ reason: error.reason }, 'unreadable unread reply dead-lettered');
    return 'dead-letter';
  }
  if (reply.seq > 0 || reply.type === 'error') return 'ack';
  return refundWhenFinal(reply.jobId, options, stopping);
}

/**
 * Refunds the hold of an answer nobody received. Its settlement may not have been applied yet:
 * a stream's first chunk goes out long before the worker settles, and a settlement queued while
 * billing was away comes after the reply. While the hold is pending this waits (backing off,
 * holding the message); the hold's expiry bounds the wait, since the sweeper ends it then. A
 * hold that ended without a charge (voided, expired) needs nothing.
 */
async function refundWhenFinal(
  jobId: string,
  options: SettlementConsumerOptions,
  stopping: () => boolean,
): Promise<Outcome> {
  const holdId = holdIdOfJob(jobId);
  const log = options.logger.child({ holdId, jobId, action: 'refund' });
  return retryInPlace(
    async () => {
      try {
        // Edge handed the answer to its request; this copy came back with a lost ack (ADR 0068).
        if (await options.ledger.answerDelivered(holdId)) {
          log.warn('unread copy of a delivered answer: not refunded');
          return 'ack';
        }
        const refunded = await options.ledger.refundHold(holdId);
        if (refunded.status === 'refunded') {
          log.info({ replayed: refunded.replayed }, 'unread answer refunded');
          return 'ack';
        }
        return (await options.ledger.getHold(holdId))?.status === 'pending' ? 'retry' : 'ack';
      } catch (error) {
        if (error instanceof GatewayError && error.status < 500) {
          // Unknown, or settled too long ago to refund (refunds.ts).
          log.error({ err: error }, 'unread answer not refunded');
          return 'ack';
        }
        log.warn({ err: error }, 'unread answer not refunded yet; retrying');
        return 'retry';
      }
    },
    options,
    stopping,
  );
}

/**
 * Runs `attempt` until it decides the message's outcome. `retry` (the database failed, or the
 * hold is not final yet) waits, doubling from `minBackoffMs` up to `maxBackoffMs`, while the
 * message stays held; once billing is stopping, the message goes back to the queue instead.
 */
async function retryInPlace(
  attempt: () => Promise<Outcome | 'retry'>,
  options: SettlementConsumerOptions,
  stopping: () => boolean,
): Promise<Outcome> {
  let backoffMs = options.minBackoffMs ?? 200;
  for (;;) {
    const outcome = await attempt();
    if (outcome !== 'retry') return outcome;
    if (stopping()) return 'requeue';
    await sleep(backoffMs);
    backoffMs = Math.min(backoffMs * 2, options.maxBackoffMs ?? 5_000);
  }
}

async function handle(
  delivery: Delivery,
  options: SettlementConsumerOptions,
  stopping: () => boolean,
): Promise<Outcome> {
  let settlement: BillingSettlementPayload;
  try {
    settlement = parseEnvelope('billing.settlement', delivery.body).payload;
  } catch (error) {
    if (!(error instanceof EnvelopeError)) throw error;
    options.logger.error({ reason: error.reason }, 'unreadable settlement dead-lettered');
    return 'dead-letter';
  }
  return applyDurably(settlement, options, stopping);
}

/** Applies one settlement, retrying in place while the database fails. */
async function applyDurably(
  settlement: BillingSettlementPayload,
  options: SettlementConsumerOptions,
  stopping: () => boolean,
): Promise<Outcome> {
  const log = options.logger.child({
    holdId: settlement.holdId,
    jobId: settlement.jobId,
    requestId: settlement.requestId,
    action: settlement.action,
  });
  return retryInPlace(
    async () => {
      try {
        await apply(settlement, options, log);
        return 'ack';
      } catch (error) {
        if (error instanceof GatewayError && error.status < 500) {
          // The hold was finalised first (edge voided it, the sweeper expired it), or is unknown.
          log.error(
            { err: error, producedAtMs: settlement.producedAtMs },
            'queued settlement refused',
          );
          return (await publishFailure(settlement, options, log)) ? 'ack' : 'requeue';
        }
        if (error instanceof EnvelopeError) {
          log.error({ reason: error.reason }, 'queued completion event unreadable; not sent');
          return 'ack';
        }
        log.warn({ err: error }, 'queued settlement not applied yet; retrying');
        return 'retry';
      }
    },
    options,
    stopping,
  );
}

async function apply(
  settlement: BillingSettlementPayload,
  options: SettlementConsumerOptions,
  log: Logger,
): Promise<void> {
  if (settlement.action === 'void') {
    const voided = await options.ledger.voidHold(settlement.holdId);
    log.info({ status: voided.status, replayed: voided.replayed }, 'queued void applied');
    return;
  }
  if (settlement.action === 'refund') {
    const refunded = await options.ledger.refundHold(settlement.holdId);
    log.info({ status: refunded.status, replayed: refunded.replayed }, 'queued refund applied');
    return;
  }
  const settled = await options.ledger.settleHold(settlement.holdId, {
    inputTokens: settlement.inputTokens ?? 0,
    outputTokens: settlement.outputTokens ?? 0,
  });
  log.info({ replayed: settled.replayed }, 'queued settlement applied');
  if (settlement.completed) {
    // An async job's event, held back until its cost was known (a duplicate may repeat it:
    // the dispatcher delivers at least once anyway).
    await publishCompletion(options, settlement.jobId, {
      outcome: 'settled',
      queued: settlement.completed,
      costMicroDzd: settled.costMicroDzd,
    });
  }
}

/** The async job's hold was final before its settlement: its webhook reports a failure. */
async function publishFailure(
  settlement: BillingSettlementPayload,
  options: SettlementConsumerOptions,
  log: Logger,
): Promise<boolean> {
  if (!settlement.completed) return true;
  try {
    // The failure event carries no results (spec: results and error never travel together).
    await publishCompletion(options, settlement.jobId, {
      outcome: 'refused',
      queued: settlement.completed,
    });
    return true;
  } catch (error) {
    log.warn({ err: error }, 'failure event not published; retrying the settlement');
    return false;
  }
}

async function publishCompletion(
  options: SettlementConsumerOptions,
  jobId: string,
  event: CompletedEventOf,
): Promise<void> {
  await options.bus.publish(
    {
      exchange: options.names.exchanges.events,
      routingKey: options.names.routingKeys.inferenceCompleted,
    },
    completedEvent(event),
    { correlationId: jobId },
  );
}
