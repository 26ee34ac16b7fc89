import { makeEnvelope } from '@gateway/contracts';
import type { InferenceCancelPayload, InferenceJobPayload } from '@gateway/contracts';
import type { GatewayNames, MessageBus } from '@gateway/messaging';

/**
 * Publishing side of the job protocol (docs/job-protocol.md): jobs to `gateway.jobs` with routing
 * key `priority` or `default` (so a backlog of default jobs never delays a priority one),
 * `correlationId` = job id; cancellations to `gateway.control` with key `cancel`, which every
 * worker receives. Both are confirmed by the broker before the promise resolves.
 */
export class JobPublisher {
  constructor(
    private readonly bus: MessageBus,
    private readonly names: GatewayNames,
  ) {}

  async publishJob(job: InferenceJobPayload): Promise<void> {
    const envelope = makeEnvelope('inference.job', job);
    const routingKey =
      job.serviceTier === 'priority'
        ? this.names.routingKeys.priorityJob
        : this.names.routingKeys.defaultJob;
    await this.bus.publish({ exchange: this.names.exchanges.jobs, routingKey }, envelope, {
      messageId: envelope.id,
      correlationId: job.jobId,
      ...(job.replyTo === undefined ? {} : { replyTo: job.replyTo }),
    });
  }

  async publishCancel(cancel: InferenceCancelPayload): Promise<void> {
    const envelope = makeEnvelope('inference.cancel', cancel);
    await this.bus.publish(
      { exchange: this.names.exchanges.control, routingKey: this.names.routingKeys.cancelJob },
      envelope,
      { messageId: envelope.id, correlationId: cancel.jobId },
    );
  }
}
