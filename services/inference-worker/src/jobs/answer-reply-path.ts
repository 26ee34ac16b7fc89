/*
 * A directly handed-over job's reply path (ADR 0072): its replies as NDJSON lines of the HTTP
 * answer to edge.
 */
import type { ServerResponse } from 'node:http';
import type { Envelope } from '@gateway/contracts';
import type { ReplyPath } from './outbox.js';

/**
 * Lines of the HTTP answer. A line written is received unless edge dies before reading it (ADR
 * 0072 says what that costs); a connection already closed receives nothing, like an unroutable
 * reply. The job's last reply (final or error) also ends the answer: its line and the end of
 * the chunked body leave in one write, and edge reads them with one wake-up instead of two.
 */
export function answerReplyPath(res: ServerResponse): ReplyPath {
  return {
    async send(envelope: Envelope<'inference.reply'>): Promise<boolean> {
      if (res.destroyed || res.writableEnded) return false;
      const line = `${JSON.stringify(envelope)}\n`;
      if (envelope.payload.type !== 'chunk') {
        res.end(line);
        return true;
      }
      if (res.write(line)) return true;
      // Edge reads slower than the model writes: wait for it, or for the connection to close.
      return new Promise<boolean>((resolve) => {
        const done = (drained: boolean) => {
          res.off('drain', onDrain);
          res.off('close', onClose);
          resolve(drained);
        };
        const onDrain = () => done(true);
        const onClose = () => done(false);
        res.once('drain', onDrain);
        res.once('close', onClose);
      });
    },
  };
}
