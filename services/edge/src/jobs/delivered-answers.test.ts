import { describe, expect, it } from '@jest/globals';
import { GatewayError, makeEnvelope, type InferenceReplyPayload } from '@gateway/contracts';
import type { ConsumeOptions, Delivery, Handler, MessageBus } from '@gateway/messaging';
import { createLogger } from '@gateway/observability';
import { silentStream } from '../testing/silent-log.suite.js';
import { DeliveredAnswers } from './delivered-answers.js';
import { ReplyRouter } from './job-replies.js';

/*
 * A final reply edge handed to its request, whose acknowledgement was then lost with the
 * channel, comes back to its queue; should that copy go unread, billing would refund an answer
 * the client has. Edge tells billing the answer was delivered (ADR 0068).
 */

const log = createLogger({ service: 'edge', destination: silentStream });

/** A bus that keeps the reply queue's handler and options, to play deliveries by hand. */
function fakeBus() {
  const consumer: { handler?: Handler<unknown>; options?: ConsumeOptions } = {};
  const bus = {
    declareQueue: async () => {},
    consume: async (_queue: string, handler: Handler<unknown>, options: ConsumeOptions) => {
      consumer.handler = handler;
      consumer.options = options;
      return { cancel: async () => {} };
    },
  } as unknown as MessageBus;
  return { bus, consumer };
}

const delivery = (reply: InferenceReplyPayload): Delivery => ({
  body: makeEnvelope('inference.reply', reply),
  headers: {},
  deliveryCount: 1,
  retries: 0,
  queue: 't.edge.replies.x',
});

async function routerWithListener() {
  const { bus, consumer } = fakeBus();
  const lost: string[] = [];
  const router = new ReplyRouter({
    bus,
    prefix: 't.',
    logger: log,
    onAnswerAckLost: (jobId) => lost.push(jobId),
  });
  await router.start();
  const pushed: InferenceReplyPayload[] = [];
  router.listen('chatcmpl-1', { push: (reply) => pushed.push(reply), replyPathLost: () => {} });
  /** Delivers `reply`, then reports its acknowledgement dropped. */
  const play = async (reply: InferenceReplyPayload) => {
    const d = delivery(reply);
    const outcome = await consumer.handler!(d);
    consumer.options!.onOutcomeUncertain?.(d, outcome as 'ack');
    return outcome;
  };
  return { play, lost, pushed };
}

describe('ReplyRouter and a lost acknowledgement', () => {
  it('reports the answer of a first reply handed to its request', async () => {
    const { play, lost, pushed } = await routerWithListener();
    expect(await play({ jobId: 'chatcmpl-1', seq: 0, type: 'final', data: {} })).toBe('ack');
    expect(pushed).toHaveLength(1);
    expect(lost).toEqual(['chatcmpl-1']);
  });

  it('ignores later replies, errors, and replies nobody waited for', async () => {
    const { play, lost } = await routerWithListener();
    await play({ jobId: 'chatcmpl-1', seq: 3, type: 'chunk', data: {} });
    await play({
      jobId: 'chatcmpl-1',
      seq: 0,
      type: 'error',
      error: { code: 'internal_error', message: 'x' },
    });
    await play({ jobId: 'chatcmpl-other', seq: 0, type: 'final', data: {} });
    expect(lost).toEqual([]);
  });
});

describe('DeliveredAnswers', () => {
  it('marks the hold delivered, again in the background while billing is away', async () => {
    const calls: string[] = [];
    let failures = 2;
    const delivered = new DeliveredAnswers({
      billing: {
        markAnswerDelivered: async (holdId: string) => {
          calls.push(holdId);
          if (failures-- > 0) throw new GatewayError('service_unavailable', 'billing away');
          return { holdId, refunded: false };
        },
      },
      log,
      minBackoffMs: 5,
      maxBackoffMs: 10,
      retries: 5,
    });
    delivered.mark('chatcmpl-1');
    for (let waitedMs = 0; calls.length < 3 && waitedMs < 5_000; waitedMs += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(calls).toEqual(['chatcmpl-1', 'chatcmpl-1', 'chatcmpl-1']);
    for (let waitedMs = 0; delivered.pending > 0 && waitedMs < 5_000; waitedMs += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(delivered.pending).toBe(0);
  });

  it('does not retry what billing refused (an unknown hold)', async () => {
    const calls: string[] = [];
    const delivered = new DeliveredAnswers({
      billing: {
        markAnswerDelivered: async (holdId: string) => {
          calls.push(holdId);
          throw new GatewayError('resource_not_found', 'No such hold');
        },
      },
      log,
      minBackoffMs: 5,
    });
    delivered.mark('chatcmpl-2');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls).toEqual(['chatcmpl-2']);
    expect(delivered.pending).toBe(0);
  });
});
