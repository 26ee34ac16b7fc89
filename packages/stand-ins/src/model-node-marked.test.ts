import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { postJson, waitFor } from './http-client.suite.js';
import { createStandInModelNode, type StandInModelNode } from './model-node.js';

let node: StandInModelNode;
const chatUrl = () => `${node.url}/v1/chat/completions`;
const marked = (id: string, extra: Record<string, unknown> = {}) => ({
  model: 'm',
  messages: [{ role: 'user', content: `Tell me a story [[req:${id}]]` }],
  ...extra,
});

beforeAll(async () => {
  node = await createStandInModelNode({ firstTokenLatencyMs: 0, tokensPerSecond: 200 });
});
afterAll(() => node.close());

describe('stand-in model node: model calls per request marker', () => {
  it('counts every call carrying a marker and how many ran to the end', async () => {
    expect((await postJson(chatUrl(), marked('a'))).status).toBe(200);
    expect((await postJson(chatUrl(), marked('a'))).status).toBe(200);
    expect((await postJson(chatUrl(), marked('b', { stream: true }))).status).toBe(200);
    expect(node.markedCalls()).toEqual({
      a: { started: 2, completed: 2 },
      b: { started: 1, completed: 1 },
    });
  });

  it('does not count a generation its client abandoned, or one the node cut, as completed', async () => {
    const controller = new AbortController();
    const response = await fetch(chatUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(marked('gone', { stream: true })),
      signal: controller.signal,
    });
    await response.body!.getReader().read();
    controller.abort();
    node.setFault({ kind: 'drop-mid-stream', afterTokens: 2, count: 1 });
    await fetch(chatUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(marked('cut', { stream: true })),
    })
      .then((r) => r.text())
      .catch(() => undefined);
    node.setFault({ kind: 'status', status: 500, count: 1 });
    expect((await postJson(chatUrl(), marked('failed'))).status).toBe(500);
    await waitFor(() => node.stats().outstanding === 0);
    const calls = node.markedCalls();
    expect([calls.gone, calls.cut, calls.failed]).toEqual([
      { started: 1, completed: 0 },
      { started: 1, completed: 0 },
      { started: 1, completed: 0 },
    ]);
    const overHttp = (await (await fetch(`${node.url}/_stand-in/marked`)).json()) as {
      marked: unknown;
    };
    expect(overHttp.marked).toEqual(calls);
  });
});
