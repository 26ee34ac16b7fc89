import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { postJson, waitFor } from './http-client.suite.js';
import { createStandInModelNode, type StandInModelNode } from './model-node.js';

let node: StandInModelNode;
const chat = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
const chatUrl = () => `${node.url}/v1/chat/completions`;

beforeAll(async () => {
  node = await createStandInModelNode({ firstTokenLatencyMs: 0, tokensPerSecond: 0 });
});
afterAll(() => node.close());

/** Reads a chat stream until `stopAfter` content chunks arrived (then aborts) or it breaks. */
async function readContentChunks(signal: AbortController, stopAfter = Infinity) {
  const response = await fetch(chatUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...chat, stream: true }),
    signal: signal.signal,
  });
  const reader = response.body!.getReader();
  let text = '';
  let chunks = 0;
  try {
    while (chunks < stopAfter) {
      const { done, value } = await reader.read();
      if (done) return { chunks, broken: false };
      text += Buffer.from(value).toString();
      chunks = text
        .split('\n\n')
        .filter((e) => e.includes('"content":"') && !e.includes('"role"')).length;
    }
    signal.abort();
    return { chunks, broken: false };
  } catch {
    return { chunks, broken: true };
  }
}

describe('stand-in model node: status faults and health', () => {
  it('answers a counted status fault n times, then recovers', async () => {
    node.setFault({ kind: 'status', status: 503, count: 2 });
    // A counted fault is a blip: health stays good.
    expect((await fetch(`${node.url}/health`)).status).toBe(200);
    const first = await postJson(chatUrl(), chat);
    expect(first.status).toBe(503);
    expect(first.body.error).toMatchObject({ type: 'server_error', message: expect.any(String) });
    expect((await postJson(chatUrl(), chat)).status).toBe(503);
    expect((await postJson(chatUrl(), chat)).status).toBe(200);
  });

  it('reports unhealthy while an uncounted 5xx fault is active', async () => {
    node.setFault({ kind: 'status', status: 500 });
    expect((await fetch(`${node.url}/health`)).status).toBe(503);
    expect((await postJson(chatUrl(), chat)).status).toBe(500);
    node.clearFault();
    expect((await fetch(`${node.url}/health`)).status).toBe(200);
  });

  it('sends Retry-After with 429, and TGI-shaped errors on TGI routes', async () => {
    node.setFault({ kind: 'status', status: 429, count: 2, retryAfterS: 3 });
    const limited = await postJson(chatUrl(), chat);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(limited.body.error.code).toBe('rate_limit_exceeded');
    const tgi = await postJson(`${node.url}/generate`, { inputs: 'x' });
    expect(tgi.body).toEqual({ error: expect.any(String), error_type: 'overloaded' });
  });

  it('can be marked unhealthy while still serving', async () => {
    node.setFault({ kind: 'unhealthy' });
    expect((await fetch(`${node.url}/health`)).status).toBe(503);
    expect((await postJson(chatUrl(), chat)).status).toBe(200);
    node.clearFault();
  });

  it('takes faults over HTTP and reports stats', async () => {
    const set = (body: unknown) =>
      fetch(`${node.url}/_stand-in/fault`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await set({ kind: 'status', status: 200 })).status).toBe(400);
    expect((await set({ kind: 'status', status: 502, count: 1 })).status).toBe(204);
    expect((await postJson(chatUrl(), chat)).status).toBe(502);
    expect((await set({ kind: 'garbage' })).status).toBe(204);
    expect((await fetch(`${node.url}/_stand-in/fault`, { method: 'DELETE' })).status).toBe(204);
    expect((await postJson(chatUrl(), chat)).status).toBe(200);
    const stats = await (await fetch(`${node.url}/_stand-in/stats`)).json();
    expect(stats).toMatchObject({
      outstanding: 0,
      byPath: { '/v1/chat/completions': expect.any(Number) },
    });
  });
});

describe('stand-in model node: broken answers', () => {
  it('answers garbage: 200 with a body that is not JSON', async () => {
    node.setFault({ kind: 'garbage', count: 1 });
    const response = await fetch(chatUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chat),
    });
    expect(response.status).toBe(200);
    await expect(response.json()).rejects.toThrow();
  });

  it('drops a stream after n tokens, and a plain request before answering', async () => {
    const abortsBefore = node.stats().aborted;
    node.setFault({ kind: 'drop-mid-stream', afterTokens: 3, count: 2 });
    expect(await readContentChunks(new AbortController())).toEqual({ chunks: 3, broken: true });
    await expect(postJson(chatUrl(), chat)).rejects.toThrow();
    // The server cut these connections: they are not client aborts.
    expect(node.stats().aborted).toBe(abortsBefore);
    expect((await postJson(chatUrl(), chat)).status).toBe(200);
  });

  it('holds a timeout-faulted request until the client gives up, and counts the abort', async () => {
    const before = node.stats().aborted;
    node.setFault({ kind: 'timeout', count: 1 });
    const request = fetch(chatUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chat),
      signal: AbortSignal.timeout(200),
    });
    await expect(request).rejects.toThrow();
    await waitFor(() => node.stats().aborted === before + 1);
    expect(node.stats().lastAbort).toMatchObject({ path: '/v1/chat/completions', tokensSent: 0 });
    await waitFor(() => node.stats().outstanding === 0);
  });
});

describe('stand-in model node: client disconnects', () => {
  it('notices a client leaving mid-stream within 1 s and counts the tokens sent', async () => {
    node.setOptions({ tokensPerSecond: 50, answerTokensMin: 200, answerTokensMax: 200 });
    try {
      const before = node.stats().aborted;
      const controller = new AbortController();
      const { chunks } = await readContentChunks(controller, 5);
      const abortedAtMs = Date.now();
      await waitFor(() => node.stats().aborted === before + 1, 1_000);
      const last = node.stats().lastAbort!;
      expect(last.path).toBe('/v1/chat/completions');
      expect(last.atMs - abortedAtMs).toBeLessThan(1_000);
      expect(last.tokensSent).toBeGreaterThanOrEqual(chunks);
      expect(last.tokensSent).toBeLessThan(chunks + 25);
    } finally {
      node.setOptions({ tokensPerSecond: 0, answerTokensMin: 30, answerTokensMax: 60 });
    }
  });
});

describe('stand-in model node: request log and close', () => {
  it('records requests with credentials redacted, bounded to the last 500', async () => {
    node.clearRequests();
    await postJson(chatUrl(), chat, { authorization: 'Bearer secret-key' });
    const [recorded] = node.requests();
    expect(recorded).toMatchObject({ method: 'POST', path: '/v1/chat/completions', body: chat });
    expect(recorded!.headers.authorization).toBe('[redacted]');
    expect(JSON.stringify(node.requests())).not.toContain('secret-key');
    for (let i = 0; i < 505; i += 1) await fetch(`${node.url}/v1/models`);
    expect(node.requests()).toHaveLength(500);
  });

  it('close() cuts held connections and refuses new ones', async () => {
    const other = await createStandInModelNode();
    other.setFault({ kind: 'timeout' });
    const held = fetch(`${other.url}/v1/models`).then(
      () => 'answered',
      () => 'cut',
    );
    await waitFor(() => other.stats().outstanding === 1);
    await other.close();
    expect(await held).toBe('cut');
    await expect(fetch(`${other.url}/health`)).rejects.toThrow();
  });
});
