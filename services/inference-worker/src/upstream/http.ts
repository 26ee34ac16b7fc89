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
}

/** An open upstream response whose body is still to be read under the attempt's timers. */
export interface UpstreamResponse {
  response: Response;
  /** Restarts the inactivity timer (each streamed chunk). */
  touch(timeoutMs: number): void;
  /**
   * Stops the timers and aborts the request if its body is still open. `consumed`: the body was
   * read to its end, so there is nothing to abort (an abort builds an AbortError per request).
   */
  close(consumed?: boolean): void;
  /** The reason the attempt was aborted, as an UpstreamError, once it was. */
  abortError(): UpstreamError | undefined;
  /** Aborted with the attempt (job cancelled or capped, a timer ran out). */
  signal: AbortSignal;
}

/**
 * One read of a response body that also ends when `signal` aborts. Node's fetch does not always
 * fail a read already pending on the body when its request is aborted (seen: a capped stream
 * kept reading for 20 s), so the abort is raced against the read; the body is then cancelled.
 */
export async function readOrAbort(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  signal: AbortSignal,
): Promise<Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>> {
  if (signal.aborted) {
    // Aborting the fetch alone does not always close a connection whose body has unread data
    // queued (seen with a slow reader: the node generated to the end); cancelling the body does.
    await reader.cancel().catch(() => undefined);
    throw signal.reason;
  }
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([reader.read(), aborted]);
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}

const TIMEOUT = Symbol('timeout');

function classifyFetchError(error: unknown, controller: AbortController): UpstreamError {
  if (controller.signal.aborted) {
    return controller.signal.reason === TIMEOUT
      ? new UpstreamError('timeout', 'model node did not answer in time')
      : new UpstreamError('aborted', 'request aborted');
  }
  const code = (error as { cause?: { code?: string } })?.cause?.code ?? '';
  return new UpstreamError('connect', `cannot reach model node${code ? ` (${code})` : ''}`);
}

/** A refusal's body is read only to learn `error.param`; beyond this it is not read. */
const ERROR_BODY_MAX_BYTES = 64 * 1024;

/**
 * Reads a body of at most `maxBytes` (decoded); null when it is longer, without buffering more
 * than that: a node cannot make the worker hold an unbounded answer in memory.
 */
async function readCapped(
  response: Response,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Buffer | null> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > maxBytes || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    return declared > maxBytes ? null : Buffer.alloc(0);
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = signal ? await readOrAbort(reader, signal) : await reader.read();
    if (done) return Buffer.concat(chunks, total);
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
}

const tooLarge = (maxBytes: number) =>
  new UpstreamError('bad_response', `model answer larger than ${maxBytes} bytes`);

async function failureFromStatus(response: Response): Promise<UpstreamError> {
  const bytes = await readCapped(response, ERROR_BODY_MAX_BYTES).catch(() => null);
  const text = bytes?.toString('utf8') ?? '';
  let param: string | undefined;
  try {
    const body = JSON.parse(text) as { error?: { param?: unknown } };
    if (typeof body.error?.param === 'string') param = body.error.param;
  } catch {
    // not JSON: the status alone decides
  }
  const status = response.status;
  if (status === 429) {
    const retryAfterS = Number(response.headers.get('retry-after')) || undefined;
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

/**
 * Opens one upstream request. Failures come back as UpstreamError; a non-2xx answer's body is
 * read (bounded by the node) only to learn the offending parameter, never logged.
 */
export async function openUpstream(request: UpstreamRequest): Promise<UpstreamResponse> {
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
    if (!consumed && !controller.signal.aborted) controller.abort();
  };
  touch(request.firstByteTimeoutMs);
  const isForm = request.body instanceof FormData;
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: request.method ?? 'POST',
      headers: {
        ...(request.body === undefined || isForm ? {} : { 'Content-Type': 'application/json' }),
        ...request.headers,
      },
      body:
        request.body === undefined
          ? undefined
          : isForm
            ? (request.body as FormData)
            : JSON.stringify(request.body),
      signal: controller.signal,
      redirect: 'error',
    });
  } catch (error) {
    const failure = classifyFetchError(error, controller);
    close();
    throw failure;
  }
  if (!response.ok) {
    const failure = await failureFromStatus(response);
    close();
    throw failure;
  }
  return {
    response,
    touch,
    close,
    signal: controller.signal,
    abortError: () =>
      controller.signal.aborted ? classifyFetchError(undefined, controller) : undefined,
  };
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
    const bytes = await readCapped(upstream.response, maxBytes, upstream.signal);
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
    const bytes = await readCapped(upstream.response, maxBytes, upstream.signal);
    if (bytes === null) throw tooLarge(maxBytes);
    consumed = true;
    return bytes;
  } catch (error) {
    throw upstream.abortError() ?? error;
  } finally {
    upstream.close(consumed);
  }
}
