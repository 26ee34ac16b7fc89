import { describe, expect, it } from '@jest/globals';
import { PublishMarks } from './client.js';

type Sent = { holdId: string; expiresAtMs: number }[];

/** A billing stand-in whose answers the test releases one call at a time. */
function recorder(final: Set<string> = new Set()) {
  const calls: Sent[] = [];
  const answers: (() => void)[] = [];
  const marks = new PublishMarks(
    (batch) =>
      new Promise((resolve, reject) => {
        calls.push(batch);
        answers.push(() =>
          batch.some((mark) => mark.holdId === 'boom')
            ? reject(new Error('billing unavailable'))
            : resolve(new Set(batch.map((m) => m.holdId).filter((id) => !final.has(id)))),
        );
      }),
  );
  const answerNext = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    answers.shift()?.();
  };
  return { marks, calls, answerNext };
}

describe('publish marks (group commit)', () => {
  it('sends a lone mark at once and the marks made meanwhile together in the next call', async () => {
    const { marks, calls, answerNext } = recorder(new Set(['h-final']));
    const first = marks.mark('h-1', 10);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual([[{ holdId: 'h-1', expiresAtMs: 10 }]]);
    const later = ['h-2', 'h-3', 'h-final'].map((id) => marks.mark(id, 20));
    const again = marks.mark('h-2', 30);
    await answerNext();
    await expect(first).resolves.toBe(true);
    await answerNext();
    expect(calls).toHaveLength(2);
    // One entry per hold, with the later expiry.
    expect(calls[1]).toEqual([
      { holdId: 'h-2', expiresAtMs: 30 },
      { holdId: 'h-3', expiresAtMs: 20 },
      { holdId: 'h-final', expiresAtMs: 20 },
    ]);
    expect(await Promise.all([...later, again])).toEqual([true, true, false, true]);
  });

  it('fails every mark of a failed call, and the next marks go in a call of their own', async () => {
    const { marks, calls, answerNext } = recorder();
    const failed = [marks.mark('boom', 1), marks.mark('h-4', 1)];
    await answerNext();
    for (const mark of failed) await expect(mark).rejects.toThrow('billing unavailable');
    const next = marks.mark('h-5', 1);
    await answerNext();
    await expect(next).resolves.toBe(true);
    expect(calls.map((batch) => batch.map((mark) => mark.holdId))).toEqual([
      ['boom', 'h-4'],
      ['h-5'],
    ]);
  });

  it('flush waits until every mark made was sent', async () => {
    const { marks, calls, answerNext } = recorder();
    void marks.mark('h-6', 1);
    let flushed = false;
    const flushing = marks.flush().then(() => (flushed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushed).toBe(false);
    await answerNext();
    await flushing;
    expect(calls).toHaveLength(1);
  });
});
