import { describe, expect, it } from '@jest/globals';
import { PublishMarks } from './publish-marks.js';

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

describe('deferred publish marks', () => {
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it('sends nothing for a mark withdrawn before its delay, which resolves false', async () => {
    const { marks, calls } = recorder();
    const deferred = marks.markLater('h-ended', 5, 30);
    expect(marks.waiting).toBe(1);
    deferred.withdraw();
    await expect(deferred.sent).resolves.toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(calls).toEqual([]);
    expect(marks.waiting).toBe(0);
  });

  it('sends a mark still waiting once its delay is over; withdrawing it then changes nothing', async () => {
    const { marks, calls, answerNext } = recorder();
    const deferred = marks.markLater('h-long', 7, 20);
    await tick();
    expect(calls).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(calls).toEqual([[{ holdId: 'h-long', expiresAtMs: 7 }]]);
    deferred.withdraw();
    await answerNext();
    await expect(deferred.sent).resolves.toBe(true);
  });

  it('flush sends the waiting marks at once, in one call', async () => {
    const { marks, calls, answerNext } = recorder();
    const waiting = [marks.markLater('h-a', 1, 60_000), marks.markLater('h-b', 2, 60_000)];
    const flushing = marks.flush();
    await answerNext();
    await flushing;
    expect(calls).toEqual([
      [
        { holdId: 'h-a', expiresAtMs: 1 },
        { holdId: 'h-b', expiresAtMs: 2 },
      ],
    ]);
    expect(await Promise.all(waiting.map((mark) => mark.sent))).toEqual([true, true]);
  });
});
