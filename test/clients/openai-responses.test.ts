import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { STAND_IN_PRICES } from '../abuse/abuse-stack.js';
import { MODELS, startClientStack, type ClientStack } from './client-stack.js';
import { fundAccount } from '@gateway/testing';

/*
 * The Responses API with the official `openai` SDK, its default settings, through the deployed
 * shape: edge translates to chat and back, the worker runs the job on the stand-in node (which
 * speaks Chat Completions only), billing settles it and keeps the stored state. The suite ends
 * with the money check: every request charged exactly its usage, never above its hold.
 */

let clients: ClientStack;

beforeAll(async () => {
  clients = await startClientStack('responses');
}, 120_000);

afterAll(async () => {
  await clients?.close();
});

const MODEL = MODELS.chat;
/** Responses the suite cancelled: their usage records say `cancelled`, not `succeeded`. */
const cancelled: string[] = [];
const PRICES = STAND_IN_PRICES;
const client = (apiKey = clients.funded.apiKey) =>
  new OpenAI({ apiKey, baseURL: clients.baseURL, maxRetries: 0 });

async function scopedToken(): Promise<string> {
  const answer = await fetch(`${clients.baseURL}/scoped-jwt`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${clients.funded.apiKey}`,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({ api_key_name: 'funded', expires_delta: 600 }),
  });
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { token: string }).token;
}

async function balanceOf(apiKey: string): Promise<unknown> {
  const answer = await fetch(`${clients.baseURL}/user/balance`, {
    headers: { Authorization: `Bearer ${apiKey}` },
  });
  return answer.json();
}

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The current weather in a city.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

type Service = { cost_dzd: number; balance_dzd: number; hold_id: string };
const serviceOf = (response: unknown) => (response as { _service: Service })._service;
const costOf = (usage: { input_tokens: number; output_tokens: number }) =>
  (usage.input_tokens * PRICES.input + usage.output_tokens * PRICES.output) / 1e6;

async function receiptOf(id: string): Promise<Record<string, unknown>> {
  const answer = await fetch(`${clients.baseURL}/requests/${id}`, {
    headers: { Authorization: `Bearer ${clients.funded.apiKey}` },
  });
  expect(answer.status).toBe(200);
  return (await answer.json()) as Record<string, unknown>;
}

/** Polls until `probe` gives something (or true), for at most 20 s. */
async function waitFor<T>(probe: () => T | Promise<T>): Promise<NonNullable<T>> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A background response once it has ended. */
const settled = (id: string) =>
  waitFor(async () => {
    const response = await client().responses.retrieve(id);
    return ['queued', 'in_progress'].includes(response.status ?? '') ? null : response;
  });

async function notFound(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('response_not_found');
}

describe('openai SDK: the Responses API', () => {
  it('creates a response, charged exactly its usage; the receipt is found by the response id', async () => {
    const response = await client().responses.create({
      model: MODEL,
      input: 'Say something short.',
    });
    expect(response.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: MODEL,
      store: true,
    });
    expect(response.output_text.length).toBeGreaterThan(0);
    expect(response.output[0]).toMatchObject({
      type: 'message',
      role: 'assistant',
      status: 'completed',
    });
    const usage = response.usage!;
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    const service = serviceOf(response);
    expect(service.cost_dzd).toBeCloseTo(costOf(usage), 6);
    const receipt = await fetch(`${clients.baseURL}/requests/${response.id}`, {
      headers: { Authorization: `Bearer ${clients.funded.apiKey}` },
    });
    expect(receipt.status).toBe(200);
    expect(await receipt.json()).toMatchObject({ job_id: response.id, status: 'succeeded' });
  });

  it('streams the reference event sequence; response.completed carries usage and cost', async () => {
    const stream = await client().responses.create({ model: MODEL, input: 'Hello', stream: true });
    const types: string[] = [];
    const sequence: number[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(completed!.output_text ?? text).toBe(text);
    const usage = completed!.usage as OpenAI.Responses.ResponseUsage & { cost_dzd: number };
    expect(usage.cost_dzd).toBeCloseTo(costOf(usage), 6);
    const stored = await client().responses.retrieve(completed!.id);
    expect(stored.output).toEqual(completed!.output);
  });

  it('the stream() helper and parse() with a zod schema', async () => {
    const final = await client().responses.stream({ model: MODEL, input: 'Hi' }).finalResponse();
    expect(final.status).toBe('completed');
    const Weather = z.object({ city: z.string(), celsius: z.number() });
    const parsed = await client().responses.parse({
      model: MODEL,
      input: 'Weather in Algiers as JSON.',
      text: { format: zodTextFormat(Weather, 'weather') },
    });
    expect(Weather.parse(parsed.output_parsed)).toEqual(parsed.output_parsed);
  });

  it('continues a tool call by previous_response_id: the chain reaches the model and the hold', async () => {
    const first = await client().responses.create({
      model: MODEL,
      input: 'What is the weather in Algiers?',
      tools: [weatherTool],
    });
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    const { call_id: callId } = call as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await client().responses.create({
      model: MODEL,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: callId, output: 'Sunny, 31 °C' }],
      tools: [weatherTool],
    });
    expect(second.previous_response_id).toBe(first.id);
    // The stand-in quotes tool results verbatim: the output reached the model after its call.
    expect(second.output_text).toContain('Sunny, 31 °C');
    expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
    expect(serviceOf(second).cost_dzd).toBeCloseTo(costOf(second.usage!), 6);
  });

  it('resolves an item_reference to a stored output item', async () => {
    const first = await client().responses.create({ model: MODEL, input: 'Name a colour.' });
    const said = first.output[0]!.id!;
    const second = await client().responses.create({
      model: MODEL,
      store: false,
      input: [
        { role: 'user', content: 'Name a colour.' },
        { type: 'item_reference', id: said },
        { role: 'user', content: 'Another one.' },
      ],
    });
    expect(second.status).toBe('completed');
    expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
    await notFound(client().responses.retrieve(second.id));
  });

  it('retrieves, lists input items and deletes; a deleted response is gone for good', async () => {
    const created = await client().responses.create({
      model: MODEL,
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: 'one' },
        { role: 'user', content: 'two' },
        { role: 'user', content: 'three' },
      ],
    });
    const got = await client().responses.retrieve(created.id);
    expect(got.id).toBe(created.id);
    expect(got.output).toEqual(created.output);
    const page = await client().responses.inputItems.list(created.id, { limit: 2 });
    const texts = (item: OpenAI.Responses.ResponseItem) =>
      ((item as { content: { text: string }[] }).content[0] ?? { text: '' }).text;
    expect(page.data.map(texts)).toEqual(['three', 'two']);
    expect(page.has_more).toBe(true);
    const all = await client().responses.inputItems.list(created.id, { order: 'asc' });
    expect(all.data.map(texts)).toEqual(['one', 'two', 'three']);
    await client().responses.delete(created.id);
    await notFound(client().responses.retrieve(created.id));
    await notFound(
      client().responses.create({ model: MODEL, previous_response_id: created.id, input: 'more' }),
    );
  });

  it('another account can neither read, delete, continue nor reference a stored response', async () => {
    const mine = await client().responses.create({ model: MODEL, input: 'secret plans' });
    const other = await fundAccount(clients.stack.operator, {
      name: 'responses other',
      keyName: 'other',
      creditDzd: 10,
      credit: { reference: 'responses client suite', idempotencyKey: 'responses-other-credit' },
    });
    const theirs = client(other.apiKey);
    const before = await balanceOf(other.apiKey);
    await notFound(theirs.responses.retrieve(mine.id));
    await notFound(theirs.responses.inputItems.list(mine.id));
    await notFound(theirs.responses.delete(mine.id));
    await notFound(theirs.responses.cancel(mine.id));
    await notFound(
      theirs.responses.create({ model: MODEL, previous_response_id: mine.id, input: 'x' }),
    );
    await notFound(
      theirs.responses.create({
        model: MODEL,
        input: [{ type: 'item_reference', id: mine.output[0]!.id! }],
      }),
    );
    expect(await balanceOf(other.apiKey)).toEqual(before);
    expect((await client().responses.retrieve(mine.id)).id).toBe(mine.id);
  });

  it("a scoped token reads what it stored; the account's keys read it too, not the reverse", async () => {
    const token = await scopedToken();
    const byToken = await client(token).responses.create({ model: MODEL, input: 'from a token' });
    expect((await client(token).responses.retrieve(byToken.id)).id).toBe(byToken.id);
    expect((await client().responses.retrieve(byToken.id)).id).toBe(byToken.id);
    const byKey = await client().responses.create({ model: MODEL, input: 'from the key' });
    await notFound(client(token).responses.retrieve(byKey.id));
    const otherToken = await scopedToken();
    await notFound(client(otherToken).responses.retrieve(byToken.id));
  });

  it('store: false keeps nothing; built-in tools and unknown fields are 400 naming them', async () => {
    const unstored = await client().responses.create({ model: MODEL, input: 'x', store: false });
    expect((unstored as unknown as { store: boolean }).store).toBe(false);
    await notFound(client().responses.retrieve(unstored.id));
    const refused = await client()
      .responses.create({ model: MODEL, input: 'x', tools: [{ type: 'web_search' }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tools[0].type');
  });

  it('an Idempotency-Key replays the first answer and charges once', async () => {
    // The SDK's own `idempotencyKey` option sends nothing for OpenAI's client: the header it is.
    const options = { headers: { 'Idempotency-Key': `responses-${Date.now()}` } };
    const before = await balanceOf(clients.funded.apiKey);
    const first = await client().responses.create({ model: MODEL, input: 'Once only.' }, options);
    const again = await client().responses.create({ model: MODEL, input: 'Once only.' }, options);
    expect(again.id).toBe(first.id);
    expect(again.output).toEqual(first.output);
    const after = (await balanceOf(clients.funded.apiKey)) as { balance_dzd: number };
    const spent = (before as { balance_dzd: number }).balance_dzd - after.balance_dzd;
    expect(spent).toBeCloseTo(serviceOf(first).cost_dzd, 6);
    const conflict = await client()
      .responses.create({ model: MODEL, input: 'Something else.' }, options)
      .catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(OpenAI.ConflictError);
  });

  it('a retry under its Idempotency-Key is answered even after what it continued was deleted', async () => {
    const first = await client().responses.create({ model: MODEL, input: 'Remember this.' });
    const options = { headers: { 'Idempotency-Key': `continue-${Date.now()}` } };
    const body = { model: MODEL, previous_response_id: first.id, input: 'And now?' };
    const answered = await client().responses.create(body, options);
    await client().responses.delete(first.id);
    const retried = await client().responses.create(body, options);
    expect(retried.id).toBe(answered.id);
  });

  it('runs a background response: queued at once, in progress, then its result, charged exactly', async () => {
    // Its first token waits long enough for the checks made while it runs (a short answer at
    // 40 tokens/s alone could end before them).
    clients.stack.node.setOptions({ tokensPerSecond: 40, firstTokenLatencyMs: 1_500 });
    try {
      const queued = await client().responses.create({
        model: MODEL,
        input: 'Tell me a story.',
        background: true,
      });
      expect(queued).toMatchObject({ status: 'queued', background: true, output: [], usage: null });
      const running = await client().responses.retrieve(queued.id);
      expect(running.status).toBe('in_progress');
      // Not continued while it runs.
      await expect(
        client().responses.create({ model: MODEL, input: 'And?', previous_response_id: queued.id }),
      ).rejects.toMatchObject({ status: 400, param: 'previous_response_id' });
      const done = await settled(queued.id);
      expect(done).toMatchObject({ status: 'completed', background: true });
      expect(done.output_text.length).toBeGreaterThan(0);
      const usage = done.usage as OpenAI.Responses.ResponseUsage & { cost_dzd: number };
      expect(usage.cost_dzd).toBeCloseTo(costOf(usage), 6);
      expect(await receiptOf(queued.id)).toMatchObject({ status: 'succeeded' });
      // Its result continues like any other.
      const next = await client().responses.create({
        model: MODEL,
        input: 'Shorter.',
        previous_response_id: queued.id,
      });
      expect(next.status).toBe('completed');
      // Ended: a cancel answers it as it is.
      expect(await client().responses.cancel(queued.id)).toMatchObject({ status: 'completed' });
    } finally {
      clients.stack.node.setOptions({ tokensPerSecond: 0, firstTokenLatencyMs: 5 });
    }
  });

  it('cancels a background response: the job stops, billed for what it produced', async () => {
    clients.stack.node.setOptions({
      tokensPerSecond: 20,
      answerTokensMin: 400,
      answerTokensMax: 400,
    });
    try {
      const before = clients.nodeChatBodies().length;
      const queued = await client().responses.create({
        model: MODEL,
        input: 'Write at length.',
        background: true,
      });
      // Generating: the node has the request, and some output has been produced.
      await waitFor(() => clients.nodeChatBodies().length > before);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const answer = await client().responses.cancel(queued.id);
      expect(answer).toMatchObject({ id: queued.id, status: 'cancelled', background: true });
      cancelled.push(queued.id);
      const receipt = await waitFor(async () => {
        const r = (await receiptOf(queued.id)) as {
          status: string;
          settled_dzd: number | null;
          tokens: { completion: number };
        };
        return r.status === 'pending' ? null : r;
      });
      // What it produced before the cancel: the prompt and some output, not the whole answer.
      expect(receipt).toMatchObject({ status: 'cancelled' });
      expect(receipt.settled_dzd).toBeGreaterThan(0);
      expect(receipt.tokens.completion).toBeGreaterThan(0);
      expect(receipt.tokens.completion).toBeLessThan(400);
      // The job's own end, after the cancel, changes nothing.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await client().responses.retrieve(queued.id)).status).toBe('cancelled');
    } finally {
      clients.stack.node.setOptions({
        tokensPerSecond: 0,
        answerTokensMin: 30,
        answerTokensMax: 60,
      });
    }
  });

  it('background is stored and not streamed; only a background response is cancelled (400)', async () => {
    for (const [body, param] of [
      [{ stream: true }, 'stream'],
      [{ store: false }, 'store'],
    ] as const) {
      await expect(
        client().responses.create({ model: MODEL, input: 'x', background: true, ...body }),
      ).rejects.toMatchObject({ status: 400, param });
    }
    const plain = await client().responses.create({ model: MODEL, input: 'Hi' });
    await expect(client().responses.cancel(plain.id)).rejects.toMatchObject({
      status: 400,
      param: 'response_id',
    });
  });

  it('charged every request exactly its usage, never above its hold (money check)', async () => {
    expect(await clients.moneyViolations({ cancelled })).toEqual([]);
  });
});
