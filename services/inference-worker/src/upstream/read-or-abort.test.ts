import { describe, expect, it } from '@jest/globals';
import { readOrAbort } from './http.js';

/*
 * A job aborted while the worker was not reading (it was publishing the previous chunk) must
 * still close the node's response: aborting the fetch alone did not always close a connection
 * with unread data, and the node then generated to the end (issue 15 fault suite: clients
 * leaving mid-stream after an edge restart, up to 15 of 16 model calls ran to the end).
 */

function trackedBody() {
  const cancelled: unknown[] = [];
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => controller.enqueue(new TextEncoder().encode('data: {}\n\n')),
    cancel: (reason) => void cancelled.push(reason ?? 'cancelled'),
  });
  return { reader: body.getReader(), cancelled };
}

describe('readOrAbort', () => {
  it('cancels the body when the attempt was aborted before the read', async () => {
    const { reader, cancelled } = trackedBody();
    const attempt = new AbortController();
    attempt.abort(new Error('cancelled'));
    await expect(readOrAbort(reader, attempt.signal)).rejects.toThrow('cancelled');
    expect(cancelled).toHaveLength(1);
  });

  it('cancels the body when the attempt is aborted during a pending read', async () => {
    const body = new ReadableStream<Uint8Array>({ cancel: () => void cancelled.push(true) });
    const cancelled: unknown[] = [];
    const attempt = new AbortController();
    const read = readOrAbort(body.getReader(), attempt.signal);
    attempt.abort(new Error('cancelled'));
    await expect(read).rejects.toThrow('cancelled');
    expect(cancelled).toHaveLength(1);
  });

  it('reads normally while the attempt runs', async () => {
    const { reader, cancelled } = trackedBody();
    const chunk = await readOrAbort(reader, new AbortController().signal);
    expect(chunk.done).toBe(false);
    expect(cancelled).toEqual([]);
  });
});
