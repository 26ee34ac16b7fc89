import { describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { droppedWarning, translateForExternalProvider } from './translate.js';

const options = { upstreamModel: 'upstream-reasoner-2026', maxOutputTokens: 8192 };
const messages = [{ role: 'user', content: 'Why is the sky blue?' }];
const translate = (request: Record<string, unknown>) =>
  translateForExternalProvider({ model: 'ext/reasoner', messages, ...request }, options);

describe('external provider allowlist', () => {
  it('sends the resolved upstream id and the messages, with no warnings when nothing is dropped', () => {
    const { body, warnings } = translate({});
    expect(body).toEqual({
      model: 'upstream-reasoner-2026',
      messages,
      max_completion_tokens: 8192,
    });
    expect(warnings).toEqual([]);
  });

  it('translates max_tokens into max_completion_tokens', () => {
    const { body, warnings } = translate({ max_tokens: 150 });
    expect(body.max_completion_tokens).toBe(150);
    expect(body).not.toHaveProperty('max_tokens');
    expect(warnings).toEqual([]);
  });

  it('keeps max_completion_tokens and drops max_tokens with a warning when both are sent', () => {
    const { body, warnings } = translate({ max_tokens: 100, max_completion_tokens: 300 });
    expect(body.max_completion_tokens).toBe(300);
    expect(body).not.toHaveProperty('max_tokens');
    expect(warnings).toEqual([droppedWarning('max_tokens')]);
  });

  it('caps max_completion_tokens at the catalog output cap', () => {
    expect(translate({ max_completion_tokens: 100_000 }).body.max_completion_tokens).toBe(8192);
  });

  it.each([
    ['frequency_penalty', 0.5],
    ['presence_penalty', -1],
    ['n', 2],
    ['seed', 42],
    ['user', 'user-1'],
    ['logprobs', true],
    ['response_format', { type: 'json_object' }],
    ['tools', [{ type: 'function', function: { name: 'f', parameters: {} } }]],
  ])('passes %s through unchanged', (name, value) => {
    const { body, warnings } = translate({ [name]: value });
    expect(body[name]).toEqual(value);
    expect(warnings).toEqual([]);
  });

  it.each(['none', 'low', 'medium', 'high', 'xhigh'])('accepts reasoning_effort %s', (effort) => {
    expect(translate({ reasoning_effort: effort }).body.reasoning_effort).toBe(effort);
  });

  it.each(['max', 'extreme', 3])(
    'refuses reasoning_effort %p with invalid_request_body',
    (effort) => {
      const attempt = () => translate({ reasoning_effort: effort });
      expect(attempt).toThrow(GatewayError);
      expect(attempt).toThrow(
        expect.objectContaining({ code: 'invalid_request_body', param: 'reasoning_effort' }),
      );
    },
  );

  it('accepts temperature 1 and drops any other value with a warning', () => {
    expect(translate({ temperature: 1 })).toMatchObject({ body: { temperature: 1 }, warnings: [] });
    const { body, warnings } = translate({ temperature: 0.2 });
    expect(body).not.toHaveProperty('temperature');
    expect(warnings).toEqual([droppedWarning('temperature')]);
  });

  it.each(['top_p', 'stop', 'usage'])('drops %s with a warning', (name) => {
    const { body, warnings } = translate({ [name]: name === 'stop' ? ['\n'] : 1 });
    expect(body).not.toHaveProperty(name);
    expect(warnings).toEqual([droppedWarning(name)]);
  });

  it('copies parallel_tool_calls only with non-empty tools', () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: {} } }];
    expect(translate({ tools, parallel_tool_calls: false })).toMatchObject({
      body: { parallel_tool_calls: false },
      warnings: [],
    });
    for (const request of [
      { parallel_tool_calls: true },
      { tools: [], parallel_tool_calls: true },
    ]) {
      const { body, warnings } = translate(request);
      expect(body).not.toHaveProperty('parallel_tool_calls');
      expect(warnings).toEqual([droppedWarning('parallel_tool_calls')]);
    }
  });

  it('drops any other parameter with a warning that names the field and never its value', () => {
    const { body, warnings } = translate({ mystery_knob: 'sk-secret-value', tool_choice: 'auto' });
    expect(body).not.toHaveProperty('mystery_knob');
    expect(warnings).toEqual([droppedWarning('mystery_knob'), droppedWarning('tool_choice')]);
    expect(warnings.join(' ')).not.toContain('sk-secret-value');
  });

  it('sorts warnings alphabetically and uses the exact text of the spec', () => {
    const { warnings } = translate({
      usage: true,
      top_p: 0.9,
      stop: 'x',
      temperature: 0,
      max_tokens: 5,
      max_completion_tokens: 9,
    });
    expect(warnings).toEqual([
      "Parameter 'max_tokens' is not supported by this model and was ignored.",
      "Parameter 'stop' is not supported by this model and was ignored.",
      "Parameter 'temperature' is not supported by this model and was ignored.",
      "Parameter 'top_p' is not supported by this model and was ignored.",
      "Parameter 'usage' is not supported by this model and was ignored.",
    ]);
  });

  it('asks for usage on streamed requests and drops the client stream_options', () => {
    const { body, warnings } = translate({
      stream: true,
      stream_options: { include_usage: false },
    });
    expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(warnings).toEqual([droppedWarning('stream_options')]);
  });

  it('neither forwards nor warns about gateway parameters', () => {
    const { body, warnings } = translate({
      service_tier: 'priority',
      webhook: 'https://example.com/h',
    });
    expect(body).not.toHaveProperty('service_tier');
    expect(body).not.toHaveProperty('webhook');
    expect(warnings).toEqual([]);
  });
});
