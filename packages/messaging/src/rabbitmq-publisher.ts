import { randomUUID } from 'node:crypto';
import type { ChannelModel, ConfirmChannel, Message } from 'amqplib';
import { BusError } from './bus.js';
import type { BusLogger } from './bus.js';
import type { Envelope } from './envelope.js';
import { errorSummary, settleWithin, withTimeout } from './outcome.js';
import type { Session } from './rabbitmq-session.js';
import { QUEUE_NAME_EXCHANGE } from './topology.js';

/** Lets a basic.return be matched to its publish; stripped from deliveries with other `x-`s. */
const PUBLISH_ID_HEADER = 'x-publish-id';
/** Pause before trying again on a fresh channel, so a flapping connection is not hammered. */
const RETRY_PAUSE_MS = 50;
const CLOSE_DRAIN_MS = 2_000;

/** The connection or channel went away before the confirm: safe to publish again. */
class ChannelLost extends Error {
  /** The broker closed the channel with ACCESS_REFUSED (this publish, or another one on it). */
  refused = false;
  /** The message was handed to the channel before it was lost: the broker may have queued it. */
  sent = false;
}

/** AMQP's ACCESS_REFUSED: the broker closed the channel because the user may not do that. */
const ACCESS_REFUSED = 403;

/**
 * Publishes on one confirm channel with `mandatory`, so a message resolves only once the
 * broker stored it in at least one queue. A lost channel is retried on the next connection
 * until the deadline (at-least-once: a retry after a lost confirm may duplicate a message, and
 * a retry that finds no queue is not proof that the first copy found none: `timeout` then).
 */
export class ConfirmPublisher {
  private channel: ConfirmChannel | null = null;
  private opening: Promise<ConfirmChannel> | null = null;
  private readonly returned = new Set<string>();
  /** Channels the broker closed with ACCESS_REFUSED: a publish refused twice is `forbidden`. */
  private readonly refused = new WeakSet<ConfirmChannel>();
  private closed = false;

  constructor(
    private readonly session: Session,
    private readonly logger: BusLogger,
  ) {}

  isOpen(): boolean {
    return this.channel !== null;
  }

  /** Called from the connection's setup: publishing resumes on the new connection. */
  async attach(model: ChannelModel): Promise<void> {
    await this.open(model);
  }

  /** `exchange` '' addresses the queue named `routingKey` (through `QUEUE_NAME_EXCHANGE`). */
  async publish(
    exchange: string,
    routingKey: string,
    envelope: Envelope,
    timeoutMs: number,
  ): Promise<void> {
    const target = exchange || QUEUE_NAME_EXCHANGE;
    const deadline = Date.now() + timeoutMs;
    const timedOut = (cause?: unknown) =>
      new BusError('timeout', `publish not confirmed within ${timeoutMs} ms`, { cause });
    let lastError: unknown;
    let refusals = 0;
    /** An earlier copy reached a channel that was lost before its confirm: it may be queued. */
    let earlierCopyMayBeQueued = false;
    while (!this.closed) {
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) throw timedOut(lastError);
      try {
        const channel = await this.channelFor(remainingMs);
        const confirmed = this.confirm(channel, target, routingKey, envelope);
        return await withTimeout(confirmed, deadline - Date.now(), () => timedOut());
      } catch (error) {
        if (earlierCopyMayBeQueued && error instanceof BusError && error.code === 'unroutable') {
          // No queue for this copy now (its queue's node went down, say) does not mean the
          // earlier one was not queued before: the outcome is unknown, like a lost confirm. A
          // reply's sender must not take it for "nobody can read it" and refund an answer that
          // was read (the nemesis found that).
          throw new BusError(
            'timeout',
            'publish not confirmed: a copy lost with its channel may be queued, the retry found no queue',
            { cause: error },
          );
        }
        if (!(error instanceof ChannelLost)) throw error;
        earlierCopyMayBeQueued ||= error.sent;
        // The broker does not say which publish it refused: any publish on the channel fails
        // with it. One that is refused again on a fresh channel is this user's to give up.
        if (error.refused && ++refusals > 1) {
          // Reopen the channel the refusal closed: other publishes (and readiness) go on.
          await this.channelFor(Math.max(0, deadline - Date.now())).catch(() => undefined);
          const to = `'${target}' / '${routingKey}'`;
          throw new BusError('forbidden', `publishing to ${to} refused (ACCESS_REFUSED)`, {
            cause: error,
          });
        }
        lastError = error;
        await new Promise((r) => setTimeout(r, Math.min(RETRY_PAUSE_MS, remainingMs)));
      }
    }
    throw new BusError('closed', 'bus is closed');
  }

  /** Waits (bounded) for outstanding confirms, then closes the channel. */
  async close(): Promise<void> {
    this.closed = true;
    const channel = this.channel;
    this.channel = null;
    if (!channel) return;
    await settleWithin(channel.waitForConfirms(), CLOSE_DRAIN_MS);
    await settleWithin(channel.close(), CLOSE_DRAIN_MS);
  }

  private async channelFor(timeoutMs: number): Promise<ConfirmChannel> {
    if (this.channel) return this.channel;
    const model = await this.session.wait(timeoutMs);
    if (this.channel) return this.channel;
    // The channel died but the connection lives (e.g. after a channel error): open another.
    this.opening ??= this.open(model).finally(() => (this.opening = null));
    try {
      return await this.opening;
    } catch (error) {
      throw new ChannelLost('could not open a publishing channel', { cause: error });
    }
  }

  private async open(model: ChannelModel): Promise<ConfirmChannel> {
    const channel = await model.createConfirmChannel();
    channel.on('error', (err: Error) => {
      if ((err as { code?: unknown }).code === ACCESS_REFUSED) this.refused.add(channel);
      this.logger.warn({ err: errorSummary(err) }, 'publishing channel error');
    });
    channel.on('return', (message: Message) => {
      const id = message.properties.headers?.[PUBLISH_ID_HEADER];
      if (typeof id === 'string') this.returned.add(id);
    });
    channel.on('close', () => {
      if (this.channel !== channel) return;
      this.channel = null;
      this.returned.clear();
    });
    this.channel = channel;
    return channel;
  }

  private confirm(
    channel: ConfirmChannel,
    exchange: string,
    routingKey: string,
    envelope: Envelope,
  ): Promise<void> {
    const publishId = randomUUID();
    return new Promise((resolve, reject) => {
      const onConfirm = (err: unknown) => {
        const returned = this.returned.delete(publishId);
        if (err instanceof Error && err.message === 'message nacked') {
          reject(new BusError('rejected', 'the broker refused the message (queue full?)'));
        } else if (err) {
          const lost = new ChannelLost('channel closed before the confirm', { cause: err });
          lost.refused = this.refused.has(channel);
          lost.sent = true;
          reject(lost);
        } else if (returned) {
          reject(new BusError('unroutable', `no queue bound to '${exchange}' / '${routingKey}'`));
        } else {
          resolve();
        }
      };
      try {
        channel.publish(
          exchange,
          routingKey,
          envelope.content,
          publishProperties(envelope, publishId),
          onConfirm,
        );
      } catch (error) {
        // amqplib throws synchronously when the channel is already closed.
        reject(new ChannelLost('channel closed', { cause: error }));
      }
    });
  }
}

function publishProperties(envelope: Envelope, publishId: string) {
  return {
    persistent: true,
    mandatory: true,
    contentType: 'application/json',
    messageId: envelope.messageId,
    correlationId: envelope.correlationId,
    replyTo: envelope.replyTo,
    expiration: envelope.expirationMs === undefined ? undefined : String(envelope.expirationMs),
    headers: { ...envelope.headers, [PUBLISH_ID_HEADER]: publishId },
  };
}
