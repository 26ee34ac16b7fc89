import { describe, expect, it } from '@jest/globals';
import OpenAI from 'openai';
import { countTextTokens } from '@gateway/tokenizer';
import { balanceOf } from '../../services/billing/src/testing/billing-under-test.suite.js';
import { useRealStack } from '../../services/edge/src/testing/real-stack.suite.js';
import { clientToken, nowS } from '../../services/edge/src/testing/tokens.suite.js';
import { fundAccount } from '@gateway/testing';

/**
 * End to end with the official `openai` SDK: edge → RabbitMQ → the real inference worker (built,
 * as a process) → a stand-in model node, with the real billing settling every request.
 */

const MODEL = 'acme/llama-stand-in';
const VISION = 'acme/vision-stand-in';
const chatPrices = {
  kind: 'chat',
  input_price_dzd_per_m: 1_000,
  output_price_dzd_per_m: 2_000,
  max_output_tokens: 256,
};
const stack = useRealStack(
  {
    [MODEL]: chatPrices,
    [VISION]: { ...chatPrices, input_modalities: ['text', 'image'], image_tokens: 1_000 },
  },
  { answerTokensMin: 5, answerTokensMax: 8 },
);
const client = (apiKey: string) => stack.client(apiKey);
const messages = [{ role: 'user' as const, content: 'Say something short.' }];

describe('openai SDK against the gateway', () => {
  it('creates a chat completion; _service carries the settled cost and balance', async () => {
    const completion = await client(stack.tenant.apiKey).chat.completions.create({
      model: MODEL,
      messages,
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe(MODEL);
    expect(completion.choices[0]?.message.content?.length).toBeGreaterThan(0);
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    const service = (
      completion as unknown as { _service: { cost_dzd: number; balance_dzd: number } }
    )._service;
    expect(service.cost_dzd).toBeGreaterThan(0);
    const balance = await balanceOf(stack.billing, stack.tenant.accountId);
    expect(balance).toMatchObject({ balance_dzd: service.balance_dzd, reserved_dzd: 0 });
  });

  it('holds and settles the tokens of a large tools array (the hold bounds what the node bills)', async () => {
    const tools = Array.from({ length: 120 }, (_, i) => ({
      type: 'function' as const,
      function: {
        name: `lookup_well_${i}`,
        description: `Finds the depth, salinity and flow of well number ${i} in the Sahara.`,
        parameters: { type: 'object', properties: { region: { type: 'string' } } },
      },
    }));
    const completion = await client(stack.tenant.apiKey).chat.completions.create({
      model: MODEL,
      messages,
      tools,
      tool_choice: { type: 'function', function: { name: 'lookup_well_7' } },
    });
    const usage = completion.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(countTextTokens(JSON.stringify(tools)));
    expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      function: { name: 'lookup_well_7' },
    });
    const costDzd = (usage.prompt_tokens * 1_000 + usage.completion_tokens * 2_000) / 1e6;
    const service = (completion as unknown as { _service: { cost_dzd: number } })._service;
    expect(service.cost_dzd).toBeCloseTo(costDzd, 6);
  });

  // An agent's second turn, as the SDK's own types build it.
  it('completes a tool round trip: the tool result is sent back and reaches the model', async () => {
    const sdk = client(stack.tenant.apiKey);
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: {
            type: 'object',
            properties: { city: { type: 'string' } },
            required: ['city'],
          },
        },
      },
    ];
    const history: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'developer', content: 'Answer with the tool.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Tamanrasset?' }] },
    ];
    const first = await sdk.chat.completions.create({ model: MODEL, messages: history, tools });
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(
      JSON.parse((call as { function: { arguments: string } }).function.arguments),
    ).toHaveProperty('city');
    history.push(first.choices[0]!.message, {
      role: 'tool',
      tool_call_id: call.id,
      content: 'sunny, 31 C',
    });
    const second = await sdk.chat.completions.create({ model: MODEL, messages: history, tools });
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toContain('sunny, 31 C');
    expect((await balanceOf(stack.billing, stack.tenant.accountId)).reserved_dzd).toBe(0);
  });

  it('answers an image part on a vision model within its hold, and refuses it elsewhere before any hold', async () => {
    const sdk = client(stack.tenant.apiKey);
    const pixel =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image_url', image_url: { url: pixel, detail: 'high' } },
        ],
      },
    ];
    const answered = await sdk.chat.completions.create({ model: VISION, messages });
    // The stand-in bills a high-detail image as 765 tokens; the hold counted 1,000.
    expect(answered.usage!.prompt_tokens).toBeGreaterThan(765);
    const refused = await sdk.chat.completions.create({ model: MODEL, messages }).catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused).toMatchObject({ status: 400, code: 'invalid_request_body' });
    expect((refused as { param?: string }).param).toBe('messages[0].content[1]');
    expect((await balanceOf(stack.billing, stack.tenant.accountId)).reserved_dzd).toBe(0);
  });

  it('streams chunks, ending with a usage chunk', async () => {
    const stream = await client(stack.tenant.apiKey).chat.completions.create({
      model: MODEL,
      messages,
      stream: true,
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    expect((await balanceOf(stack.billing, stack.tenant.accountId)).reserved_dzd).toBe(0);
  });

  it("surfaces the gateway's errors as the SDK's typed errors with status and code", async () => {
    const sdk = client(stack.tenant.apiKey);
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => {
          throw new Error('expected an error');
        },
        (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
      );
    const notFound = await failure(sdk.chat.completions.create({ model: 'acme/none', messages }));
    expect(notFound).toBeInstanceOf(OpenAI.NotFoundError);
    expect({ status: notFound.status, code: notFound.code }).toEqual({
      status: 404,
      code: 'model_not_found',
    });

    const badRequest = await failure(
      sdk.chat.completions.create({ model: MODEL, messages, temperature: 3 }),
    );
    expect(badRequest).toBeInstanceOf(OpenAI.BadRequestError);
    expect(badRequest.code).toBe('invalid_request_body');
    expect(badRequest.param).toBe('temperature');

    const unauthorized = await failure(
      client(`sk_live_${'B'.repeat(43)}`).chat.completions.create({ model: MODEL, messages }),
    );
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(unauthorized.code).toBe('invalid_api_key');

    const broke = await fundAccount(stack.billing.operator, { creditDzd: 0 });
    const payment = await failure(
      client(broke.apiKey).chat.completions.create({ model: MODEL, messages }),
    );
    expect({ status: payment.status, code: payment.code }).toEqual({
      status: 402,
      code: 'insufficient_balance',
    });

    stack.node.setFault({ kind: 'status', status: 429, count: 10 });
    try {
      const capacity = await failure(sdk.chat.completions.create({ model: MODEL, messages }));
      expect(capacity).toBeInstanceOf(OpenAI.RateLimitError);
      expect(capacity.code).toBe('rate_limit_exceeded');
    } finally {
      stack.node.clearFault();
    }
  });

  it('raises an error that follows streamed chunks inside the iteration', async () => {
    stack.node.setFault({ kind: 'drop-mid-stream', afterTokens: 2, count: 10 });
    try {
      const stream = await client(stack.tenant.apiKey).chat.completions.create({
        model: MODEL,
        messages,
        stream: true,
      });
      let caught: unknown;
      let chunks = 0;
      try {
        for await (const chunk of stream) chunks += chunk.choices.length;
      } catch (error) {
        caught = error;
      }
      expect(chunks).toBeGreaterThan(0);
      expect(caught).toBeInstanceOf(OpenAI.APIError);
      expect((caught as InstanceType<typeof OpenAI.APIError>).code).toBe('GATEWAY_TIMEOUT');
    } finally {
      stack.node.clearFault();
    }
  });

  it('accepts a scoped token minted by the client with jsonwebtoken', async () => {
    const token = clientToken(stack.tenant, {
      exp: nowS() + 600,
      models: [MODEL],
      spending_limit: 1,
    });
    const completion = await client(token).chat.completions.create({ model: MODEL, messages });
    expect(completion.choices[0]?.message.content?.length).toBeGreaterThan(0);

    const narrow = clientToken(stack.tenant, { exp: nowS() + 600, models: ['acme/other'] });
    const refused = await client(narrow)
      .chat.completions.create({ model: MODEL, messages })
      .catch((error: unknown) => error as InstanceType<typeof OpenAI.APIError>);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_allowed');

    const inspected = await fetch(
      `${stack.baseUrl}/v1/scoped-jwt?jwt=${encodeURIComponent(token)}`,
      { headers: { Authorization: `Bearer ${stack.tenant.apiKey}` } },
    );
    const view = (await inspected.json()) as { spent_dzd: number; models: string[] };
    expect(view.models).toEqual([MODEL]);
    expect(view.spent_dzd).toBeGreaterThan(0);
  });

  it('serves the native endpoint synchronously through the worker', async () => {
    const response = await fetch(`${stack.baseUrl}/v1/inference/${MODEL}`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${stack.tenant.apiKey}`,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ input: 'Once upon a time', parameters: { max_new_tokens: 16 } }),
    });
    const body = (await response.json()) as Record<string, unknown>;
    expect(response.status).toBe(200);
    expect(body).toMatchObject({
      id: expect.stringMatching(/^inf-/),
      model: MODEL,
      results: [{ generated_text: expect.any(String) }],
      inference_status: { status: 'succeeded' },
      _service: { cost_dzd: expect.any(Number), balance_dzd: expect.any(Number) },
    });
  });
});
