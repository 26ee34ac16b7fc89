import { randomUUID } from 'node:crypto';
import type { EnvelopeError } from '@gateway/contracts';
import { parseEnvelope, type InferenceJobPayload } from '@gateway/contracts';
import {
  cancelQueueName,
  gatewayTopology,
  type Consumer,
  type Delivery,
  type GatewayNames,
  type MessageBus,
  type Outcome,
} from '@gateway/messaging';
import type { Logger } from '@gateway/observability';
import { withRequestId } from '@gateway/runtime';
import type { WorkerMetrics } from './metrics.js';
import { JobOutbox } from './outbox.js';
import { runJob, type JobRunnerDeps } from './run-job.js';

export interface JobConsumerOptions {
  bus: MessageBus;
  names: GatewayNames;
  prefix: string;
  prefetch: { default: number; priority: number };
  deps: JobRunnerDeps;
  logger: Logger;
  metrics: WorkerMetrics;
}

/**
 * Consumes both job queues (priority jobs have their own consumer and slots, so a backlog of
 * default jobs never delays them) and the cancellation broadcast. Returns the consumers to stop.
 */
export async function startJobConsumers(options: JobConsumerOptions): Promise<Consumer[]> {
  const { bus, names } = options;
  options.deps.onAttemptFailed ??= (failure) => options.metrics.upstreamFailures.inc({ failure });
  const cancelQueue = cancelQueueName(options.prefix, randomUUID());
  await bus.declareQueue({
    name: cancelQueue,
    kind: 'transient',
    maxLength: 10_000,
    bindings: [{ exchange: names.exchanges.control, routingKey: names.routingKeys.cancelJob }],
  });
  const cancels = await bus.consume(
    cancelQueue,
    async (delivery) => {
      try {
        options.deps.cancellations.cancel(
          parseEnvelope('inference.cancel', delivery.body).payload.jobId,
        );
      } catch (error) {
        options.logger.warn({ err: error }, 'unreadable cancellation dropped');
      }
      return 'ack';
    },
    { prefetch: 64 },
  );
  const handler = jobHandler(options, new Map());
  const priority = await bus.consume(names.queues.inferenceJobsPriority, handler, {
    prefetch: options.prefetch.priority,
  });
  const standard = await bus.consume(names.queues.inferenceJobs, handler, {
    prefetch: options.prefetch.default,
  });
  return [priority, standard, cancels];
}

function maxDeliveriesOf(prefix: string, queue: string): number {
  return gatewayTopology(prefix).queues.find((spec) => spec.name === queue)?.maxDeliveries ?? 1;
}

/**
 * Jobs this process is running, by id: whether each reached a durable outcome, once it has. At
 * most the two queues' prefetch.
 */
type RunsHere = Map<string, Promise<boolean>>;

function jobHandler(options: JobConsumerOptions, runsHere: RunsHere) {
  const { logger } = options;
  return async (delivery: Delivery): Promise<Outcome> => {
    let job: InferenceJobPayload;
    try {
      job = parseEnvelope('inference.job', delivery.body).payload;
    } catch (error) {
      // Unreadable: no retry can help. Its hold (if any) expires through billing's sweeper.
      logger.error(
        { reason: (error as EnvelopeError).message, queue: delivery.queue },
        'unreadable job dead-lettered',
      );
      return 'dead-letter';
    }
    // Billing calls made for the job send its request id; every log line of the job names both.
    return withRequestId(job.requestId, () =>
      runOnce(
        job,
        delivery,
        options,
        logger.child({ jobId: job.jobId, requestId: job.requestId }),
        runsHere,
      ),
    );
  };
}

/**
 * A second delivery of a job this process is still running (the first delivery's channel died
 * with its broker node, and the queue handed the job out again at once) joins the first run
 * instead of generating a second time; it is acked once the first run's outcome is durable, or
 * run if that run failed to make it so.
 */
async function runOnce(
  job: InferenceJobPayload,
  delivery: Delivery,
  options: JobConsumerOptions,
  log: Logger,
  runsHere: RunsHere,
): Promise<Outcome> {
  const first = runsHere.get(job.jobId);
  if (first !== undefined && (await first)) {
    options.metrics.jobs.inc({ endpoint: job.endpoint, tier: job.serviceTier, result: 'joined' });
    log.info({ deliveryCount: delivery.deliveryCount }, 'job already run here: delivery joined');
    return 'ack';
  }
  let durable!: (value: boolean) => void;
  const run = new Promise<boolean>((resolve) => (durable = resolve));
  runsHere.set(job.jobId, run);
  try {
    const outcome = await runDelivery(job, delivery, options, log);
    durable(outcome === 'ack' || outcome === 'dead-letter');
    return outcome;
  } catch (error) {
    durable(false);
    throw error;
  } finally {
    if (runsHere.get(job.jobId) === run) runsHere.delete(job.jobId);
  }
}

async function runDelivery(
  job: InferenceJobPayload,
  delivery: Delivery,
  options: JobConsumerOptions,
  log: Logger,
): Promise<Outcome> {
  const { bus, names, deps, metrics } = options;
  const labels = { endpoint: job.endpoint, tier: job.serviceTier };
  const stopTimer = metrics.jobDurationSeconds.startTimer(labels);
  const outbox = new JobOutbox(bus, names, job);
  try {
    // Redelivered by the broker, or queued again by edge after a direct run was lost.
    const redelivered = delivery.deliveryCount > 1 || job.redelivery === true;
    const result = await runJob(job, outbox, deps, redelivered);
    metrics.jobs.inc({ ...labels, result });
    log.info({ ...labels, result, deliveryCount: delivery.deliveryCount }, 'job done');
    return 'ack';
  } catch (error) {
    const last = delivery.deliveryCount >= maxDeliveriesOf(options.prefix, delivery.queue);
    log.error(
      { err: error, deliveryCount: delivery.deliveryCount, last },
      'job outcome not durable',
    );
    if (!last) return 'requeue';
    await releaseHold(job, outbox, deps, log);
    metrics.jobs.inc({ ...labels, result: 'dead_lettered' });
    return 'dead-letter';
  } finally {
    stopTimer();
  }
}

/** Last delivery of a job that keeps failing: free the customer's money before parking it. */
async function releaseHold(
  job: InferenceJobPayload,
  outbox: JobOutbox,
  deps: JobRunnerDeps,
  logger: Logger,
) {
  try {
    await deps.billing.void(job.holdId);
    await outbox.error('GATEWAY_TIMEOUT', 'The request could not be completed.');
    await outbox.completed({ status: 'failed' }, 0);
  } catch (error) {
    logger.error(
      { err: error },
      'could not release the hold of a dead-lettered job; the sweeper will',
    );
  }
}
