import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { UpstreamError } from './errors.js';
import type { UpstreamResponse } from './http.js';

/** One streamed event of an upstream, parsed as JSON; `[DONE]` ends the stream. */
export type StreamEvent = Record<string, unknown>;

/**
 * Yields the JSON events of a server-sent-event response as they arrive, restarting the
 * inactivity timer on each network chunk. Ends at `data: [DONE]` or the end of the body; an
 * abort (cancel, deadline, idle timeout) or a dropped connection throws an UpstreamError.
 */
export async function* readSseEvents(
  upstream: UpstreamResponse,
  idleTimeoutMs: number,
): AsyncGenerator<StreamEvent> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const decoder = new TextDecoder();
  const chunks = upstream.body[Symbol.asyncIterator]();
  let ended = false;
  try {
    for (;;) {
      upstream.touch(idleTimeoutMs);
      let chunk: IteratorResult<Buffer>;
      try {
        chunk = await chunks.next();
      } catch {
        throw (
          upstream.abortError() ?? new UpstreamError('connect', 'model node dropped the stream')
        );
      }
      if (chunk.done) {
        ended = true;
        return;
      }
      parser.feed(decoder.decode(chunk.value, { stream: true }));
      while (pending.length > 0) {
        const event = pending.shift() as EventSourceMessage;
        if (event.data === '[DONE]') return;
        yield parseEvent(event.data);
      }
    }
  } finally {
    upstream.close(ended);
  }
}

function parseEvent(data: string): StreamEvent {
  try {
    const value = JSON.parse(data) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return value as StreamEvent;
    }
  } catch {
    // fall through
  }
  throw new UpstreamError('bad_response', 'model node streamed an event that is not JSON');
}
