import { EventEmitter } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import type { Response } from 'express';
import { writeFrame } from './event-stream.js';

/** A response whose socket buffer is full: every write says "wait for drain". */
function fullResponse() {
  const res = Object.assign(new EventEmitter(), {
    writableEnded: false,
    destroyed: false,
    written: [] as string[],
    write(frame: string) {
      res.written.push(frame);
      return false;
    },
    destroy() {
      res.destroyed = true;
      res.emit('close');
    },
  });
  return res;
}

const asResponse = (res: ReturnType<typeof fullResponse>) => res as unknown as Response;

describe('writeFrame', () => {
  it('cuts a client that takes nothing for the stall time', async () => {
    const res = fullResponse();
    await writeFrame(asResponse(res), 'data: 1\n\n', 20);
    expect(res.destroyed).toBe(true);
  });

  it('waits for a client that drains in time, and leaves no listener behind', async () => {
    const res = fullResponse();
    for (let i = 0; i < 20; i += 1) {
      const written = writeFrame(asResponse(res), `data: ${i}\n\n`, 1_000);
      setImmediate(() => res.emit('drain'));
      await written;
    }
    expect(res.destroyed).toBe(false);
    expect(res.written).toHaveLength(20);
    expect(res.listenerCount('close')).toBe(0);
    expect(res.listenerCount('drain')).toBe(0);
  });

  it('returns when the client leaves while it waits', async () => {
    const res = fullResponse();
    const written = writeFrame(asResponse(res), 'data: 1\n\n', 1_000);
    setImmediate(() => res.emit('close'));
    await written;
    expect(res.destroyed).toBe(false);
    expect(res.listenerCount('drain')).toBe(0);
  });
});
