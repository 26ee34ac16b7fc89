import { describe, expect, it } from '@jest/globals';
import { validateResponses } from '@gateway/contracts';
import { ResponseEvents } from './response-events.js';
import { endingOf, outputItemsOf } from './response-object.js';

const shell = () => ({
  id: 'resp_' + '0'.repeat(32),
  createdAtS: 1,
  request: validateResponses({ model: 'm', input: 'x' }),
  store: true,
});
const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, finish_reason: null, ...extra }],
});
const usage = { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 };

describe('chat stream → Responses events', () => {
  it('text: created, in_progress, the item and part opened, deltas, then everything closed in order', () => {
    const events = new ResponseEvents(shell());
    const all = [
      ...events.start(),
      ...events.chunk(chunk({ role: 'assistant', content: 'Hel' })),
      ...events.chunk(chunk({ content: 'lo' })),
      ...events.chunk(chunk({}, { finish_reason: 'stop' })),
      ...events.chunk({ choices: [], usage }),
    ];
    const { events: end, response } = events.finish(0.5, { cost_dzd: 0.5 });
    all.push(...end);
    expect(all.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(all.map((event) => event.sequence_number)).toEqual(all.map((_, i) => i));
    expect(all[6]).toMatchObject({ text: 'Hello', output_index: 0, content_index: 0 });
    expect(response).toMatchObject({
      status: 'completed',
      output: [
        {
          type: 'message',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hello', annotations: [] }],
        },
      ],
      usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10, cost_dzd: 0.5 },
      _service: { cost_dzd: 0.5 },
    });
  });

  it('tool calls: each chat index is a function_call item whose arguments arrive as deltas', () => {
    const events = new ResponseEvents(shell());
    events.start();
    const call = (index: number, fields: Record<string, unknown>) =>
      chunk({ tool_calls: [{ index, ...fields }] });
    const all = [
      ...events.chunk(
        call(0, { id: 'c1', type: 'function', function: { name: 'w', arguments: '{"ci' } }),
      ),
      ...events.chunk(call(0, { function: { arguments: 'ty":1}' } })),
      ...events.chunk(
        call(1, { id: 'c2', type: 'function', function: { name: 'v', arguments: '{}' } }),
      ),
    ];
    const { response } = events.finish(undefined, {});
    expect(all.map((event) => event.type)).toEqual([
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
    ]);
    expect(all[3]).toMatchObject({ arguments: '{"city":1}', name: 'w' });
    expect(response.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        call_id: 'c1',
        name: 'w',
        arguments: '{"city":1}',
        status: 'completed',
      }),
      expect.objectContaining({
        type: 'function_call',
        call_id: 'c2',
        name: 'v',
        arguments: '{}',
        status: 'completed',
      }),
    ]);
  });

  it('a length stop ends as response.incomplete with its reason', () => {
    const events = new ResponseEvents(shell());
    events.start();
    events.chunk(chunk({ content: 'abc' }, { finish_reason: 'length' }));
    const { events: end, response } = events.finish(undefined, {});
    expect(end.at(-1)!.type).toBe('response.incomplete');
    expect(response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
  });

  it('a failure closes the open item, then sends error and response.failed', () => {
    const events = new ResponseEvents(shell());
    events.start();
    events.chunk(chunk({ content: 'ab' }));
    const failed = events.fail({ code: 'GATEWAY_TIMEOUT', message: 'node timed out' });
    expect(failed.map((event) => event.type)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'error',
      'response.failed',
    ]);
    expect(failed.at(-1)!.response).toMatchObject({
      status: 'failed',
      error: { code: 'GATEWAY_TIMEOUT' },
    });
  });
});

describe('chat stream → Responses events, the edges', () => {
  it('a streamed refusal is its own part, with the reference refusal events, and is kept', () => {
    const events = new ResponseEvents(shell());
    events.start();
    const all = [
      ...events.chunk(chunk({ refusal: 'I cannot ' })),
      ...events.chunk(chunk({ refusal: 'help with that.' }, { finish_reason: 'stop' })),
    ];
    const { events: end, response } = events.finish(undefined, {});
    expect([...all, ...end].map((event) => event.type)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.refusal.delta',
      'response.refusal.delta',
      'response.refusal.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(response.output).toEqual([
      expect.objectContaining({
        type: 'message',
        content: [{ type: 'refusal', refusal: 'I cannot help with that.' }],
      }),
    ]);
  });

  it('a tool call cut short by a length stop is incomplete, not completed', () => {
    const events = new ResponseEvents(shell());
    events.start();
    events.chunk(
      chunk(
        {
          tool_calls: [
            { index: 0, id: 'c1', type: 'function', function: { name: 'w', arguments: '{"ci' } },
          ],
        },
        { finish_reason: 'length' },
      ),
    );
    const { response } = events.finish(undefined, {});
    expect(response).toMatchObject({ status: 'incomplete' });
    expect(response.output).toEqual([
      expect.objectContaining({ type: 'function_call', status: 'incomplete', arguments: '{"ci' }),
    ]);
  });
});

describe('chat completion → output items', () => {
  it('text first, then one function_call per tool call; a length stop is incomplete', () => {
    const items = outputItemsOf(
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{}' } }],
      },
      'completed',
    );
    expect(items).toEqual([
      expect.objectContaining({
        type: 'message',
        role: 'assistant',
        content: [expect.objectContaining({ type: 'output_text', text: 'Let me look.' })],
      }),
      expect.objectContaining({ type: 'function_call', call_id: 'c1', name: 'w', arguments: '{}' }),
    ]);
    expect(items[0]!.id).toMatch(/^msg_/);
    expect(items[1]!.id).toMatch(/^fc_/);
    expect(endingOf('length')).toEqual({
      status: 'incomplete',
      incompleteReason: 'max_output_tokens',
    });
    expect(endingOf('tool_calls')).toEqual({ status: 'completed', incompleteReason: null });
  });
});
