import { describe, expect, it } from '@jest/globals';
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeEnvelope, type InferenceReplyPayload } from '@gateway/contracts';
import { answerReplyPath } from './answer-reply-path.js';

const reply = (seq: number, type: InferenceReplyPayload['type']) =>
  makeEnvelope('inference.reply', {
    jobId: 'job_1',
    seq,
    type,
    ...(type === 'error'
      ? { error: { code: 'upstream_error', message: 'the node failed' } }
      : { data: { n: seq } }),
  });

/** Serves one answer written by `write`, and returns what edge's side reads of it. */
async function answered(
  write: (res: ServerResponse) => Promise<void>,
): Promise<{ lines: number[]; ended: boolean }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.flushHeaders();
    void write(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST' }, (answer) => {
        let text = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => (text += chunk));
        const lines = () =>
          text
            .split('\n')
            .filter(Boolean)
            .map((line) => (JSON.parse(line) as { payload: { seq: number } }).payload.seq);
        answer.on('end', () => resolve({ lines: lines(), ended: true }));
        // An answer still open after its writer is done: what was read by then.
        setTimeout(() => resolve({ lines: lines(), ended: false }), 300).unref();
      });
      req.on('error', reject);
      req.end();
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe("a direct job's answer as its reply path", () => {
  it('writes chunks as lines and leaves the answer open after them', async () => {
    const read = await answered(async (res) => {
      const path = answerReplyPath(res);
      expect(await path.send(reply(0, 'chunk'))).toBe(true);
      expect(await path.send(reply(1, 'chunk'))).toBe(true);
    });
    expect(read).toEqual({ lines: [0, 1], ended: false });
  });

  it.each(['final', 'error'] as const)('ends the answer with the %s reply', async (type) => {
    const read = await answered(async (res) => {
      const path = answerReplyPath(res);
      await path.send(reply(0, 'chunk'));
      expect(await path.send(reply(1, type))).toBe(true);
      expect(res.writableEnded).toBe(true);
    });
    expect(read).toEqual({ lines: [0, 1], ended: true });
  });

  it('receives nothing once the answer is over', async () => {
    await answered(async (res) => {
      const path = answerReplyPath(res);
      await path.send(reply(0, 'final'));
      expect(await path.send(reply(1, 'chunk'))).toBe(false);
    });
  });
});
