import { request as httpRequest, type IncomingMessage } from 'node:http';
import { CHAT_MODEL, NATIVE_MODEL } from './fault-stack.js';

/*
 * The suite's API client: one request over a fresh connection, read as a real client would
 * (JSON, or SSE event by event), that can leave on purpose (after some chunks or some time) and
 * reports what it got. Every prompt carries `[[req:<id>]]` so the stand-in counts model calls
 * per request.
 */

export type OutcomeKind = 'answer' | 'accepted' | 'error' | 'cut' | 'left';

export interface Usage {
  prompt_tokens: number;
  /** Absent on an embeddings answer. */
  completion_tokens?: number;
}

export interface ClientOutcome {
  /** answer: a complete answer (JSON with choices or an embeddings list, or a stream ending in [DONE] with usage and
   * no error event); accepted: an async job's acknowledgement; error: an HTTP error status or an
   * SSE error event; cut: the connection broke first; left: the client left on purpose. */
  kind: OutcomeKind;
  status: number;
  /** Stream chunks with output (content, reasoning, tool-call deltas) received. */
  relayed: number;
  usage?: Usage;
  body: string;
}

export interface Leave {
  afterChunks?: number;
  afterMs?: number;
}

export interface ClientRequest {
  port: number;
  apiKey: string;
  path: string;
  body: unknown;
  idempotencyKey?: string;
  /** Sent as `X-Request-Id`: edge keeps it, and billing records it on the request's holds. */
  requestId?: string;
  leave?: Leave;
}

export const marked = (id: string) => `Write about the desert. [[req:${id}]]`;

export const chatBody = (id: string, extra: Record<string, unknown> = {}) => ({
  model: CHAT_MODEL,
  messages: [{ role: 'user', content: marked(id) }],
  max_tokens: 64,
  ...extra,
});

export const streamBody = (id: string) => chatBody(id, { stream: true });

export const toolStreamBody = (id: string) =>
  chatBody(id, {
    stream: true,
    tools: [
      {
        type: 'function',
        function: { name: 'lookup', parameters: { type: 'object', properties: {} } },
      },
    ],
    tool_choice: { type: 'function', function: { name: 'lookup' } },
  });

export const asyncPath = `/v1/inference/${NATIVE_MODEL}`;

export const asyncBody = (id: string, webhook: string) => ({
  input: marked(id),
  parameters: { max_new_tokens: 40 },
  webhook,
});

interface StreamState {
  relayed: number;
  done: boolean;
  failed: boolean;
  usage?: Usage;
  pending: string;
}

const hasOutput = (delta: Record<string, unknown> | undefined) =>
  delta !== undefined &&
  ['content', 'reasoning_content', 'reasoning', 'refusal', 'tool_calls'].some(
    (field) => delta[field] !== undefined && delta[field] !== null && delta[field] !== '',
  );

/** Feeds SSE text; returns the state after every complete event. */
function readEvents(state: StreamState, text: string): void {
  const events = (state.pending + text).split('\n\n');
  state.pending = events.pop() ?? '';
  for (const event of events) {
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trim())
      .join('');
    if (data === '[DONE]') {
      state.done = true;
      continue;
    }
    if (data === '') continue;
    const chunk = JSON.parse(data) as {
      error?: unknown;
      usage?: Usage | null;
      choices?: { delta?: Record<string, unknown> }[];
    };
    if (chunk.error !== undefined) state.failed = true;
    if (chunk.usage) state.usage = chunk.usage;
    if (chunk.choices?.some((choice) => hasOutput(choice.delta))) state.relayed += 1;
  }
}

function jsonOutcome(status: number, body: string): ClientOutcome {
  let parsed: { choices?: unknown; object?: unknown; usage?: Usage; id?: unknown } = {};
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return { kind: 'cut', status, relayed: 0, body };
  }
  if (status !== 200) return { kind: 'error', status, relayed: 0, body };
  // A chat answer, or an embeddings list.
  if (Array.isArray(parsed.choices) || parsed.object === 'list') {
    return {
      kind: 'answer',
      status,
      relayed: 0,
      body,
      ...(parsed.usage && { usage: parsed.usage }),
    };
  }
  return { kind: 'accepted', status, relayed: 0, body };
}

function streamOutcome(status: number, state: StreamState, body: string): ClientOutcome {
  const complete = state.done && !state.failed && state.usage !== undefined;
  const kind = status !== 200 || state.failed ? 'error' : complete ? 'answer' : 'cut';
  return { kind, status, relayed: state.relayed, body, ...(state.usage && { usage: state.usage }) };
}

/** Sends one request; never throws: a broken connection is an outcome too. */
export function send(request: ClientRequest): Promise<ClientOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    let status = 0;
    const state: StreamState = { relayed: 0, done: false, failed: false, pending: '' };
    let body = '';
    const finish = (outcome: ClientOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const leave = () => {
      finish({ kind: 'left', status, relayed: state.relayed, body });
      req.destroy();
    };
    const onResponse = (res: IncomingMessage) => {
      status = res.statusCode ?? 0;
      const isStream = String(res.headers['content-type']).startsWith('text/event-stream');
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        body += text;
        if (!isStream) return;
        readEvents(state, text);
        if (state.relayed >= (request.leave?.afterChunks ?? Infinity)) leave();
      });
      res.on('end', () =>
        finish(isStream ? streamOutcome(status, state, body) : jsonOutcome(status, body)),
      );
      res.on('error', () => finish({ kind: 'cut', status, relayed: state.relayed, body }));
    };
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: request.port,
        method: 'POST',
        path: request.path,
        agent: false,
        headers: {
          Authorization: `Bearer ${request.apiKey}`,
          'Content-Type': 'application/json',
          ...(request.idempotencyKey && { 'Idempotency-Key': request.idempotencyKey }),
          ...(request.requestId && { 'X-Request-Id': request.requestId }),
        },
      },
      onResponse,
    );
    const timer = setTimeout(
      () => (request.leave?.afterMs === undefined ? req.destroy() : leave()),
      request.leave?.afterMs ?? 120_000,
    );
    req.on('error', () => finish({ kind: 'cut', status, relayed: state.relayed, body }));
    req.end(JSON.stringify(request.body));
  });
}
