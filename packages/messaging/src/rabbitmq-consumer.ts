import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { BusLogger, Delivery, Handler } from './bus.js';
import { readHeaders, retryCopy } from './envelope.js';
import {
  decide,
  describe,
  errorSummary,
  InFlight,
  settleWithin,
  settlementFor,
} from './outcome.js';
import type { Settlement } from './outcome.js';
import type { ConfirmPublisher } from './rabbitmq-publisher.js';
import type { Session } from './rabbitmq-session.js';
import type { QueueDeclaration } from './topology-plan.js';

export interface ConsumerContext {
  session: Session;
  publisher: ConfirmPublisher;
  logger: BusLogger;
  queueInfo(name: string): QueueDeclaration | undefined;
  /** Declares the topology again, in case the queue itself was deleted under us. */
  redeclare(model: ChannelModel): Promise<void>;
  drainTimeoutMs: number;
  publishConfirmTimeoutMs: number;
  reconnect: { initialDelayMs: number; maxDelayMs: number };
}

/** One consumer's channel on one connection. */
interface Attachment {
  model: ChannelModel;
  channel: Channel | null;
  consumerTag: string | null;
  open: boolean;
  ready: Promise<void>;
  /** Outcomes sent on this channel within the uncertain window, oldest first (when watched). */
  recent: SentOutcome[];
}

type OutcomeAction = 'ack' | 'requeue' | 'dead-letter';

interface SentOutcome {
  delivery: Delivery<unknown>;
  action: OutcomeAction;
  atMs: number;
}

/** Who hears of outcomes that may not have reached the broker (`onOutcomeUncertain`). */
export interface UncertainOutcomes {
  report(delivery: Delivery<unknown>, outcome: OutcomeAction): void;
  windowMs: number;
}

/**
 * An acknowledgement sent this long before its channel closed may not have been processed: a
 * broker node stopping, or a connection the broker already dropped (a paused process that just
 * woke), closes it within moments of the last frames.
 */
export const DEFAULT_UNCERTAIN_WINDOW_MS = 10_000;
/** Outcomes remembered per channel at most, whatever the rate (the oldest are forgotten). */
const MAX_RECENT_OUTCOMES = 50_000;

/**
 * A consumer that outlives its channels: each (re)connect attaches it on a fresh channel, and
 * a channel lost while the connection lives (broker-side cancel, consumer timeout) is reopened
 * with backoff. Deliveries of a lost channel are redelivered by the broker; their handlers'
 * late outcomes are dropped.
 */
export class RabbitMqConsumer {
  private attachment: Attachment | null = null;
  private cancelled = false;
  private readonly inFlight = new InFlight();
  private reattachTimer: NodeJS.Timeout | undefined;
  private reattachAttempts = 0;

  constructor(
    readonly queue: string,
    private readonly handler: Handler<unknown>,
    private readonly prefetch: number,
    private readonly ctx: ConsumerContext,
    private readonly uncertain: UncertainOutcomes | undefined = undefined,
  ) {}

  isAttachedTo(model: ChannelModel | null): boolean {
    const a = this.attachment;
    return model !== null && a?.model === model && a.open && a.consumerTag !== null;
  }

  /** Idempotent per connection, so setup and consume() may race safely. */
  attach(model: ChannelModel): Promise<void> {
    if (this.cancelled) return Promise.resolve();
    const current = this.attachment;
    if (current?.model === model && current.open) return current.ready;
    const attachment: Attachment = {
      model,
      channel: null,
      consumerTag: null,
      open: true,
      ready: Promise.resolve(),
      recent: [],
    };
    this.attachment = attachment;
    attachment.ready = this.open(attachment);
    attachment.ready.catch(() => {});
    return attachment.ready;
  }

  /** Stops deliveries, waits (bounded) for handlers, then closes the channel: the rest return. */
  async cancel(): Promise<void> {
    if (this.cancelled) return;
    this.cancelled = true;
    clearTimeout(this.reattachTimer);
    const bound = this.ctx.drainTimeoutMs;
    const attachment = this.attachment;
    if (attachment) await settleWithin(attachment.ready, bound);
    const channel = attachment?.open ? attachment.channel : null;
    if (channel && attachment?.consumerTag) {
      await settleWithin(channel.cancel(attachment.consumerTag), bound);
    }
    if (!(await this.inFlight.waitForIdle(bound))) {
      const context = { queue: this.queue, inFlight: this.inFlight.size };
      this.ctx.logger.warn(context, 'cancel: handlers still running; their messages return');
    }
    if (channel && attachment?.open) await settleWithin(channel.close(), bound);
  }

  private async open(attachment: Attachment): Promise<void> {
    const channel = await attachment.model.createChannel();
    attachment.channel = channel;
    channel.on('error', (err: Error) => {
      this.ctx.logger.warn({ queue: this.queue, err: errorSummary(err) }, 'consumer channel error');
    });
    channel.on('close', () => {
      attachment.open = false;
      this.reportUncertain(attachment);
      this.onChannelClosed(attachment);
    });
    await channel.prefetch(this.prefetch);
    const { consumerTag } = await channel.consume(
      this.queue,
      (message) => this.onMessage(attachment, message),
      { noAck: false },
    );
    attachment.consumerTag = consumerTag;
    this.reattachAttempts = 0;
  }

  /** The channel closed: what it sent within the window may not have been processed. */
  private reportUncertain(attachment: Attachment): void {
    const sent = attachment.recent;
    attachment.recent = [];
    // A channel this consumer closed itself (cancel) flushed its frames first.
    if (!this.uncertain || this.cancelled) return;
    const sinceMs = performance.now() - this.uncertain.windowMs;
    for (const outcome of sent) {
      if (outcome.atMs >= sinceMs) this.uncertain.report(outcome.delivery, outcome.action);
    }
  }

  /** Remembers an outcome sent, forgetting those older than the window (bounded). */
  private remember(attachment: Attachment, delivery: Delivery<unknown>, action: OutcomeAction) {
    if (!this.uncertain) return;
    const nowMs = performance.now();
    const { recent } = attachment;
    recent.push({ delivery, action, atMs: nowMs });
    let expired = 0;
    while (expired < recent.length && recent[expired]!.atMs < nowMs - this.uncertain.windowMs) {
      expired += 1;
    }
    const over = Math.max(expired, recent.length - MAX_RECENT_OUTCOMES);
    if (over > 0) recent.splice(0, over);
  }

  private onChannelClosed(attachment: Attachment): void {
    if (this.cancelled || this.attachment !== attachment) return;
    // If the whole connection went, the next setup re-attaches and this timer finds it done.
    this.scheduleReattach();
  }

  scheduleReattach(): void {
    if (this.cancelled || this.reattachTimer) return;
    const { initialDelayMs, maxDelayMs } = this.ctx.reconnect;
    const delayMs = Math.min(maxDelayMs, initialDelayMs * 2 ** this.reattachAttempts);
    this.reattachAttempts += 1;
    this.reattachTimer = setTimeout(() => {
      this.reattachTimer = undefined;
      const model = this.ctx.session.current();
      if (!model || this.cancelled || this.isAttachedTo(model)) return;
      const reattached = this.ctx.redeclare(model).then(() => this.attach(model));
      reattached.catch((err: unknown) => {
        this.ctx.logger.warn({ queue: this.queue, err: errorSummary(err) }, 'resubscribe failed');
        this.scheduleReattach();
      });
    }, delayMs);
  }

  private onMessage(attachment: Attachment, message: ConsumeMessage | null): void {
    if (message === null) {
      // The broker cancelled us (queue deleted or failed over): reopen on a fresh channel.
      this.ctx.logger.warn({ queue: this.queue }, 'consumer cancelled by the broker');
      void attachment.channel?.close().catch(() => {});
      return;
    }
    // Left unacknowledged: it goes back to the queue when cancel() closes the channel.
    if (this.cancelled) return;
    void this.handle(attachment, message);
  }

  private async handle(attachment: Attachment, message: ConsumeMessage): Promise<void> {
    const leave = this.inFlight.enter();
    try {
      const delivery = this.toDelivery(message);
      if (!delivery) {
        this.ctx.logger.error({ queue: this.queue }, 'body is not JSON; dead-lettering');
        this.settle(attachment, message, 'dead-letter', undefined);
        return;
      }
      const outcome = await decide(this.handler, delivery, this.ctx.logger);
      const info = this.ctx.queueInfo(this.queue);
      const settlement = settlementFor(outcome, delivery.retries, info);
      const action = await this.retryOrFallBack(message, delivery, settlement);
      this.settle(attachment, message, action, delivery);
    } catch (error) {
      // Unreachable by design; a bug here must still not crash the process.
      this.ctx.logger.error({ queue: this.queue, err: errorSummary(error) }, 'delivery failed');
    } finally {
      leave();
    }
  }

  /** `retry` = a confirmed copy in the retry queue, then ack; if that fails, requeue instead. */
  private async retryOrFallBack(
    message: ConsumeMessage,
    delivery: Delivery<unknown>,
    settlement: Settlement,
  ): Promise<'ack' | 'requeue' | 'dead-letter'> {
    if (settlement.kind !== 'retry') return settlement.kind;
    const { properties } = message;
    const copy = retryCopy({ ...properties, content: message.content }, settlement.retries);
    try {
      await this.ctx.publisher.publish(
        '',
        settlement.queue,
        copy,
        this.ctx.publishConfirmTimeoutMs,
      );
      return 'ack';
    } catch (error) {
      this.ctx.logger.warn(
        { ...describe(delivery), err: errorSummary(error) },
        'retry failed; requeue',
      );
      return 'requeue';
    }
  }

  private settle(
    attachment: Attachment,
    message: ConsumeMessage,
    action: OutcomeAction,
    delivery: Delivery<unknown> | undefined,
  ): void {
    const { channel } = attachment;
    try {
      if (!attachment.open || !channel) throw new Error('channel closed');
      if (action === 'ack') channel.ack(message);
      else channel.nack(message, false, action === 'requeue');
      if (delivery) this.remember(attachment, delivery, action);
    } catch {
      // The broker already gave the message back for redelivery with the channel.
      const context = { queue: this.queue, messageId: message.properties.messageId, action };
      this.ctx.logger.warn(context, 'outcome dropped: channel gone, message will be redelivered');
      if (delivery) this.uncertain?.report(delivery, action);
    }
  }

  private toDelivery(message: ConsumeMessage): Delivery<unknown> | undefined {
    let body: unknown;
    try {
      body = JSON.parse(message.content.toString('utf8'));
    } catch {
      return undefined;
    }
    const { properties, fields } = message;
    const { headers, retries } = readHeaders(properties.headers);
    // Quorum queues count returns in x-delivery-count; classic ones only flag a redelivery.
    const returns = Number(properties.headers?.['x-delivery-count'] ?? 0);
    return {
      body,
      messageId: properties.messageId,
      correlationId: properties.correlationId,
      replyTo: properties.replyTo,
      headers,
      deliveryCount: fields.redelivered ? Math.max(1, returns) + 1 : 1,
      retries,
      queue: this.queue,
    };
  }
}
