import { describe, expect, it } from '@jest/globals';
import type { InferenceReplyPayload } from '@gateway/contracts';
import { ReplySequence } from './job-replies.js';

const reply = (
  seq: number,
  type: InferenceReplyPayload['type'] = 'chunk',
): InferenceReplyPayload => ({
  jobId: 'job-1',
  seq,
  type,
});

describe('ReplySequence', () => {
  it('hands replies out in seq order whatever order they arrived in', async () => {
    const sequence = new ReplySequence();
    sequence.push(reply(2, 'final'));
    sequence.push(reply(0));
    const first = await sequence.next(100);
    sequence.push(reply(1));
    const seqs = [first, await sequence.next(100), await sequence.next(100)].map((r) =>
      r === 'timeout' ? r : r.seq,
    );
    expect(seqs).toEqual([0, 1, 2]);
  });

  it('drops a repeated seq (a redelivered reply)', async () => {
    const sequence = new ReplySequence();
    sequence.push(reply(0));
    sequence.push(reply(0));
    expect(await sequence.next(100)).toMatchObject({ seq: 0 });
    expect(await sequence.next(20)).toBe('timeout');
  });

  it('wakes a waiting reader and times out a silent one', async () => {
    const sequence = new ReplySequence();
    const waiting = sequence.next(1_000);
    setTimeout(() => sequence.push(reply(0)), 10);
    expect(await waiting).toMatchObject({ seq: 0 });
    const started = Date.now();
    expect(await sequence.next(50)).toBe('timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('rejects the reader once closed, and ignores later replies', async () => {
    const sequence = new ReplySequence();
    const waiting = sequence.next(1_000);
    sequence.close(() => new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    sequence.push(reply(0));
    await expect(sequence.next(10)).rejects.toThrow('cancelled');
  });
});
