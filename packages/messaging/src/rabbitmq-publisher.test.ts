import { EventEmitter } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import type { ChannelModel } from 'amqplib';
import { silentLogger } from './bus.js';
import type { Envelope } from './envelope.js';
import { ConfirmPublisher } from './rabbitmq-publisher.js';
import { Session } from './rabbitmq-session.js';

/**
 * What a retried publish may conclude, against channels that behave as amqplib's do when the
 * connection drops before a confirm (the callback gets an error, the channel closes) or when no
 * queue takes the message (a basic.return, then the confirm).
 */

type Behaviour = 'lost-after-send' | 'lost-before-send' | 'unroutable' | 'confirmed';

class FakeChannel extends EventEmitter {
  constructor(private readonly behaviour: Behaviour) {
    super();
  }

  publish(
    _exchange: string,
    _routingKey: string,
    _content: Buffer,
    properties: { headers: Record<string, unknown> },
    onConfirm: (err: unknown) => void,
  ): boolean {
    if (this.behaviour === 'lost-before-send') throw new Error('Channel closed');
    setImmediate(() => {
      if (this.behaviour === 'lost-after-send') {
        onConfirm(new Error('channel closed'));
        this.emit('close');
        return;
      }
      if (this.behaviour === 'unroutable') this.emit('return', { properties });
      onConfirm(null);
    });
    return true;
  }
}

/** A publisher whose successive channels behave as listed. */
function publisherOver(...behaviours: Behaviour[]): ConfirmPublisher {
  const model = {
    createConfirmChannel: async () => {
      const next = behaviours.shift();
      if (!next) throw new Error('no more channels in this test');
      const channel = new FakeChannel(next);
      // A channel that threw on publish is closed already: the next try opens another.
      if (next === 'lost-before-send') setImmediate(() => channel.emit('close'));
      return channel;
    },
  } as unknown as ChannelModel;
  const session = new Session();
  session.set(model);
  return new ConfirmPublisher(session, silentLogger);
}

const envelope: Envelope = { content: Buffer.from('{}'), messageId: 'm1', headers: {} };

async function codeOf(publishing: Promise<void>): Promise<string> {
  return publishing.then(
    () => 'confirmed',
    (error: unknown) => (error as { code: string }).code,
  );
}

describe('ConfirmPublisher retrying after a lost channel', () => {
  it('reports unroutable when no queue took the only copy', async () => {
    const publisher = publisherOver('unroutable');
    await expect(codeOf(publisher.publish('', 'q', envelope, 2_000))).resolves.toBe('unroutable');
  });

  it('does not report unroutable when an earlier copy may have been queued: outcome unknown', async () => {
    const publisher = publisherOver('lost-after-send', 'unroutable');
    await expect(codeOf(publisher.publish('', 'q', envelope, 2_000))).resolves.toBe('timeout');
  });

  it('reports unroutable when the lost channel never took the earlier copy', async () => {
    const publisher = publisherOver('lost-before-send', 'unroutable');
    await expect(codeOf(publisher.publish('', 'q', envelope, 2_000))).resolves.toBe('unroutable');
  });

  it('confirms a copy retried after a lost channel', async () => {
    const publisher = publisherOver('lost-after-send', 'confirmed');
    await expect(codeOf(publisher.publish('', 'q', envelope, 2_000))).resolves.toBe('confirmed');
  });
});
