import { describe, expect, it } from '@jest/globals';
import { FailureWindows } from './failure-windows.js';

/*
 * Failed authentications are counted for at most `addressesMax` client addresses at once: past
 * it, the window that ends first is forgotten, and a window that ended leaves at once.
 */

const remaining = async (windows: FailureWindows, key: string) =>
  (await windows.get(key))?.remainingPoints ?? null;

describe('failure windows', () => {
  it('keeps at most addressesMax addresses, forgetting the window that ends first', async () => {
    const windows = new FailureWindows({ points: 2, windowS: 60, addressesMax: 3 });
    for (const address of ['a', 'b', 'c']) {
      await windows.penalty(address);
      await windows.penalty(address);
    }
    expect(await remaining(windows, 'a')).toBe(0);
    expect(windows.addresses).toBe(3);

    await windows.penalty('d');
    expect(windows.addresses).toBe(3);
    expect(await remaining(windows, 'a')).toBeNull();
    expect(await remaining(windows, 'b')).toBe(0);
    expect(await remaining(windows, 'd')).toBe(1);
  });

  it('counts an address once however often it fails in its window', async () => {
    const windows = new FailureWindows({ points: 30, windowS: 60, addressesMax: 2 });
    for (let i = 0; i < 5; i += 1) await windows.penalty('a');
    await windows.consume('b');
    await windows.consume('b');
    await windows.reward('b');
    expect(windows.addresses).toBe(2);
    expect(await remaining(windows, 'a')).toBe(25);
    expect(await remaining(windows, 'b')).toBe(29);
  });

  it('drops a window that ended when the next one opens', async () => {
    let nowMs = 1_000_000;
    const windows = new FailureWindows({
      points: 5,
      windowS: 60,
      addressesMax: 10,
      now: () => nowMs,
    });
    await windows.penalty('a');
    nowMs += 61_000;
    await windows.penalty('b');
    expect(windows.addresses).toBe(1);
  });

  it('refuses a consume past the points with the window, and keeps counting the address once', async () => {
    const windows = new FailureWindows({ points: 1, windowS: 60, addressesMax: 5 });
    await windows.consume('a');
    await expect(windows.consume('a')).rejects.toMatchObject({ remainingPoints: 0 });
    expect(windows.addresses).toBe(1);
  });
});
