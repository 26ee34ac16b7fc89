/*
 * HTTP to a model node or the external provider: opens a request under the attempt's timers and
 * reads the answer (JSON, bytes or SSE events, bounded) and the usage it reports.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { request as undiciRequest, type Dispatcher } from 'undici';
import {
  injectTraceContext,
  markSpanFailed,
  SpanKind,
  startSpan,
  tracingEnabled,
} from '@gateway/observability';
import type { TokenUsage } from '../backends/context.js';
import { UpstreamError } from './errors.js';

export interface UpstreamRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** JSON-serialised unless it is FormData. */
  body?: unknown;
  /** The job's signal: cancellation or deadline. */
  signal: AbortSignal;
  /** Until the response headers arrive. */
  firstByteTimeoutMs: number;
  /**
   * Who answers: one of our model nodes (`node`: it gets the trace's `traceparent`) or the
   * external provider (no trace context leaves for a third party). Required, so that no new
   * caller sends our trace context out by default.
   */
  peer: 'node' | 'provider';
  /** The worker's upstream agent (`createUpstreamAgent`): its connections, never the global one. */
  dispatcher: Dispatcher;
}

/** An open upstream response whose body is still to be read under the attempt's timers. */
export interface UpstreamResponse {
  status: number;
  /** A response header's value (lower-case name). */
  header(name: string): string | undefined;
  /** The body, read once; destroyed with an error when the attempt is aborted. */
  body: AsyncIterable<Buffer>;
  /** Restarts the inactivity timer (each streamed chunk). */
  touch(timeoutMs: number): void;
  /**
   * Stops the timers and aborts the request if its body is still open. `consumed`: the body was
   * read to its end, so there is nothing to abort (an abort builds an error per request).
   */
  close(consumed?: boolean): void;
  /** The reason the attempt was aborted, as an UpstreamError, once it was. */
  abortError(): UpstreamError | undefined;
}

const TIMEOUT = Symbol('timeout');

function classifyError(error: unknown, controller: AbortController): UpstreamError {
  if (controller.signal.aborted) {
    return controller.signal.reason === TIMEOUT
      ? new UpstreamError('timeout', 'model node did not answer in time')
      : new UpstreamError('aborted', 'request aborted');
  }
  const code = (error as { code?: string; cause?: { code?: string } }) ?? {};
  const detail = code.cause?.code ?? code.code ?? '';
  return new UpstreamError('connect', `cannot reach model node${detail ? ` (${detail})` : ''}`);
}

/** A refusal's body is read only to learn `error.param`; beyond this it is not read. */
const ERROR_BODY_MAX_BYTES = 64 * 1024;

/**
 * Reads a body of at most `maxBytes`; null when it is longer, without buffering more than that:
 * a node cannot make the worker hold an unbounded answer in memory. An abort of the attempt
 * destroys the body, which ends the read with an error.
 */
async function readCapped(upstream: UpstreamResponse, maxBytes: number): Promise<Buffer | null> {
  const declared = Number(upstream.header('content-length') ?? 0);
  if (declared > maxBytes) return null;
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of upstream.body) {
    total += chunk.byteLength;
    if (total > maxBytes) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

const tooLarge = (maxBytes: number) =>
  new UpstreamError('bad_response', `model answer larger than ${maxBytes} bytes`);

async function failureFromStatus(upstream: UpstreamResponse): Promise<UpstreamError> {
  const status = upstream.status;
  if (status < 400) {
    // Redirects are not followed: a node's address is configuration, not something it moves.
    return new UpstreamError('bad_response', `model node answered ${status}`, { status });
  }
  const bytes = await readCapped(upstream, ERROR_BODY_MAX_BYTES).catch(() => null);
  const text = bytes?.toString('utf8') ?? '';
  let param: string | undefined;
  try {
    const body = JSON.parse(text) as { error?: { param?: unknown } };
    if (typeof body.error?.param === 'string') param = body.error.param;
  } catch {
    // not JSON: the status alone decides
  }
  if (status === 429) {
    const retryAfterS = Number(upstream.header('retry-after')) || undefined;
    return new UpstreamError('rate_limited', 'model node at capacity', { status, retryAfterS });
  }
  if (status >= 500)
    return new UpstreamError('server_error', `model node answered ${status}`, { status });
  if (status === 408) return new UpstreamError('timeout', 'model node timed out', { status });
  return new UpstreamError('rejected', `model node refused the request (${status})`, {
    status,
    param,
  });
}

/** The request body as bytes and its content type (a form is encoded the way fetch would). */
async function encodeBody(
  body: unknown,
): Promise<{ bytes?: Buffer | string; contentType?: string }> {
  if (body === undefined) return {};
  if (body instanceof FormData) {
    const encoded = new Response(body);
    return {
      bytes: Buffer.from(await encoded.arrayBuffer()),
      contentType: encoded.headers.get('content-type') ?? undefined,
    };
  }
  return { bytes: JSON.stringify(body), contentType: 'application/json' };
}

/**
 * Opens one upstream request (undici's `request`: `fetch` and its web streams cost several
 * times more CPU per job in the worker's profile). Failures come back as UpstreamError; a
 * non-2xx answer's body is read (bounded by the node) only to learn the offending parameter,
 * never logged.
 */
let traced: boolean | undefined;

/**
 * While tracing is on, a CLIENT span for the whole exchange (until the body is read or
 * abandoned); a node gets the span as its `traceparent`, so its own spans are its children.
 */
function traceUpstream(
  request: UpstreamRequest,
  headers: Record<string, string>,
): ((failure?: string) => void) | undefined {
  // Asked once: the shell starts tracing before the worker takes its first job.
  traced ??= tracingEnabled();
  if (!traced) return undefined;
  const peer = request.peer;
  const method = request.method ?? 'POST';
  const { span, context } = startSpan(`${method} ${peer}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'http.request.method': method, 'gateway.upstream': peer },
  });
  if (peer === 'node') injectTraceContext(headers, context);
  let ended = false;
  return (failure) => {
    if (ended) return;
    ended = true;
    if (failure !== undefined) markSpanFailed(span, failure);
    span.end();
  };
}

export async function openUpstream(request: UpstreamRequest): Promise<UpstreamResponse> {
  const headers: Record<string, string> = { ...request.headers };
  const endSpan = traceUpstream(request, headers);
  try {
    return await openTraced(request, headers, endSpan);
  } catch (error) {
    endSpan?.(error instanceof UpstreamError ? error.failure : 'error');
    throw error;
  }
}

async function openTraced(
  request: UpstreamRequest,
  requestHeaders: Record<string, string>,
  endSpan: ((failure?: string) => void) | undefined,
): Promise<UpstreamResponse> {
  const controller = new AbortController();
  const onJobAbort = () => controller.abort(request.signal.reason);
  if (request.signal.aborted) throw new UpstreamError('aborted', 'request aborted');
  request.signal.addEventListener('abort', onJobAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const touch = (timeoutMs: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(TIMEOUT), timeoutMs);
  };
  const close = (consumed = false) => {
    clearTimeout(timer);
    request.signal.removeEventListener('abort', onJobAbort);
    // A timeout or the job's abort fails the span; an answer left unread after its end does not.
    if (controller.signal.aborted) endSpan?.(classifyError(undefined, controller).failure);
    else endSpan?.();
    if (!consumed && !controller.signal.aborted) controller.abort();
  };
  touch(request.firstByteTimeoutMs);
  let upstream: UpstreamResponse;
  try {
    const { bytes, contentType } = await encodeBody(request.body);
    const response = await undiciRequest(request.url, {
      method: request.method ?? 'POST',
      headers: { ...(contentType ? { 'content-type': contentType } : {}), ...requestHeaders },
      body: bytes,
      signal: controller.signal,
      dispatcher: request.dispatcher,
    });
    upstream = {
      status: response.statusCode,
      header: (name) => {
        const value = response.headers[name];
        return Array.isArray(value) ? value[0] : value;
      },
      body: response.body,
      touch,
      close,
      abortError: () =>
        controller.signal.aborted ? classifyError(undefined, controller) : undefined,
    };
  } catch (error) {
    const failure = classifyError(error, controller);
    endSpan?.(failure.failure);
    close();
    throw failure;
  }
  if (upstream.status < 200 || upstream.status >= 300) {
    const failure = await failureFromStatus(upstream);
    endSpan?.(failure.failure);
    close();
    throw failure;
  }
  return upstream;
}

/**
 * Reads a whole JSON answer within `timeoutMs`, at most `maxBytes`; garbage or a larger answer is
 * a `bad_response` (500 `GATEWAY_TIMEOUT` class; another node may be tried).
 */
export async function readJson(
  upstream: UpstreamResponse,
  timeoutMs: number,
  maxBytes: number,
): Promise<unknown> {
  upstream.touch(timeoutMs);
  let consumed = false;
  try {
    const bytes = await readCapped(upstream, maxBytes);
    if (bytes === null) throw tooLarge(maxBytes);
    consumed = true;
    try {
      return JSON.parse(bytes.toString('utf8')) as unknown;
    } catch {
      throw new UpstreamError('bad_response', 'model node answered something that is not JSON');
    }
  } catch (error) {
    throw upstream.abortError() ?? error;
  } finally {
    upstream.close(consumed);
  }
}

/** Reads a whole binary answer (speech) within `timeoutMs`, at most `maxBytes`. */
export async function readBytes(
  upstream: UpstreamResponse,
  timeoutMs: number,
  maxBytes: number,
): Promise<Buffer> {
  upstream.touch(timeoutMs);
  let consumed = false;
  try {
    const bytes = await readCapped(upstream, maxBytes);
    if (bytes === null) throw tooLarge(maxBytes);
    consumed = true;
    return bytes;
  } catch (error) {
    throw upstream.abortError() ?? error;
  } finally {
    upstream.close(consumed);
  }
}

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

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;

/**
 * Usage as an upstream reported it, in either naming (`prompt_tokens`/`completion_tokens` of chat
 * APIs, `input_tokens`/`output_tokens` of image and audio APIs). Missing counts come from
 * `fallback` (the gateway tokenizer); a count that is present but malformed is a bad answer.
 */
export function usageFrom(body: Record<string, unknown>, fallback: () => TokenUsage): TokenUsage {
  const usage = body.usage;
  if (usage === undefined || usage === null) return fallback();
  if (typeof usage !== 'object') throw new UpstreamError('bad_response', 'malformed usage');
  const raw = usage as Record<string, unknown>;
  const prompt = count(raw.prompt_tokens) ?? count(raw.input_tokens);
  const completion = count(raw.completion_tokens) ?? count(raw.output_tokens);
  if (prompt === undefined && completion === undefined) return fallback();
  return { promptTokens: prompt ?? fallback().promptTokens, completionTokens: completion ?? 0 };
}
