import { StandInHttpError, badRequest } from './errors.js';
import { MAX_PROVIDER_CHOICES, MAX_TOOLS } from './limits.js';
import {
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  optionalObject,
  requireObject,
  type Body,
} from './validate.js';
import { validateChatMessages, type ChatMessageParam } from './chat-messages.js';
import { readChatOptions, type ChatOptions } from './chat-options.js';
import { chatPromptTokens } from './prompt-tokens.js';

/*
 * The request checks of an OpenAI-like reasoning-model API, strict as the real one is: what
 * the gateway's allowlist must translate or drop would be refused here with a 400.
 */

export type ReasoningEffort = 'none' | 'low' | 'medium' | 'high' | 'xhigh';

/** Reasoning tokens spent before the answer, per effort. */
export const REASONING_TOKENS_BY_EFFORT: Record<ReasoningEffort, number> = {
  none: 0,
  low: 16,
  medium: 64,
  high: 192,
  xhigh: 384,
};

export interface StandInProviderModel {
  id: string;
  /** Whether reasoning_effort 'none' is accepted; default true. */
  acceptsReasoningNone?: boolean;
}

export interface ProviderRequest {
  model: string;
  messages: ChatMessageParam[];
  n: number;
  stream: boolean;
  includeUsage: boolean;
  maxCompletionTokens: number | null;
  effort: ReasoningEffort;
  options: ChatOptions;
  promptTokens: number;
}

const KNOWN_FIELDS = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_completion_tokens', 'max_tokens',
  'temperature', 'top_p', 'stop', 'n', 'seed', 'user', 'logprobs', 'top_logprobs',
  'response_format', 'tools', 'tool_choice', 'parallel_tool_calls', 'reasoning_effort',
  'frequency_penalty', 'presence_penalty', 'metadata', 'store', 'service_tier', 'logit_bias',
  'modalities', 'prediction', 'prompt_cache_key', 'safety_identifier', 'verbosity',
]); // prettier-ignore

const EFFORTS = Object.keys(REASONING_TOKENS_BY_EFFORT);

function unsupportedParameter(name: string): StandInHttpError {
  return badRequest(
    `Unsupported parameter: '${name}' is not supported with this model.`,
    name,
    'unsupported_parameter',
  );
}

function present(body: Body, name: string): boolean {
  return body[name] !== undefined && body[name] !== null;
}

function checkFields(body: Body): void {
  const unknown = Object.keys(body).filter((field) => !KNOWN_FIELDS.has(field));
  if (unknown.length === 1)
    throw badRequest(`Unrecognized request argument supplied: ${unknown[0]}`);
  if (unknown.length > 1)
    throw badRequest(`Unrecognized request arguments supplied: ${unknown.join(', ')}`);
  if (present(body, 'max_tokens')) {
    throw badRequest(
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      'max_tokens',
      'unsupported_parameter',
    );
  }
  if (present(body, 'temperature') && body.temperature !== 1) {
    throw badRequest(
      `Unsupported value: 'temperature' does not support ${JSON.stringify(body.temperature)} with this model. Only the default (1) value is supported.`,
      'temperature',
      'unsupported_value',
    );
  }
  if (present(body, 'top_p')) throw unsupportedParameter('top_p');
  if (present(body, 'stop')) throw unsupportedParameter('stop');
}

function checkModel(body: Body, models: readonly StandInProviderModel[]): StandInProviderModel {
  const id = body.model;
  if (typeof id !== 'string' || id.length === 0)
    throw badRequest('You must provide a model parameter.');
  const model = models.find((m) => m.id === id);
  if (model === undefined) {
    throw new StandInHttpError(
      404,
      `The model '${id}' does not exist or you do not have access to it.`,
      null,
      'model_not_found',
    );
  }
  return model;
}

function checkEffort(body: Body, model: StandInProviderModel): ReasoningEffort {
  if (!present(body, 'reasoning_effort')) return 'medium';
  const effort = body.reasoning_effort;
  if (typeof effort !== 'string' || !EFFORTS.includes(effort)) {
    throw badRequest(
      `Invalid value: '${String(effort)}'. Supported values are: 'none', 'low', 'medium', 'high', and 'xhigh'.`,
      'reasoning_effort',
      'invalid_value',
    );
  }
  if (effort === 'none' && model.acceptsReasoningNone === false) {
    throw badRequest(
      "Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values are: 'low', 'medium', 'high', and 'xhigh'.",
      'reasoning_effort',
      'unsupported_value',
    );
  }
  return effort as ReasoningEffort;
}

/** OpenAI refuses tool settings without tools, even those that would change nothing. */
function checkToolSettings(body: Body): void {
  const tools = body.tools;
  if (Array.isArray(tools) && tools.length > 0) return;
  for (const name of ['parallel_tool_calls', 'tool_choice']) {
    if (!present(body, name)) continue;
    throw badRequest(
      `Invalid value for '${name}': '${name}' is only allowed when 'tools' are specified.`,
      name,
    );
  }
}

function readProviderOptions(body: Body): ChatOptions {
  checkToolSettings(body);
  return readChatOptions(body, MAX_TOOLS);
}

export function validateProviderRequest(
  value: unknown,
  models: readonly StandInProviderModel[],
): ProviderRequest {
  const body = requireObject(value);
  checkFields(body);
  const model = checkModel(body, models);
  const messages = validateChatMessages(body.messages);
  const effort = checkEffort(body, model);
  const stream = optionalBoolean(body, 'stream') ?? false;
  const streamOptions = optionalObject(body, 'stream_options');
  if (streamOptions !== undefined && !stream) {
    throw badRequest(
      "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      'stream_options',
      'invalid_value',
    );
  }
  optionalNumber(body, 'frequency_penalty', -2, 2);
  optionalNumber(body, 'presence_penalty', -2, 2);
  optionalInteger(body, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  optionalBoolean(body, 'logprobs');
  return {
    model: model.id,
    messages,
    n: optionalInteger(body, 'n', 1, MAX_PROVIDER_CHOICES) ?? 1,
    stream,
    includeUsage: streamOptions?.include_usage === true,
    maxCompletionTokens:
      optionalInteger(body, 'max_completion_tokens', 1, Number.MAX_SAFE_INTEGER) ?? null,
    effort,
    options: readProviderOptions(body),
    promptTokens: chatPromptTokens(messages, body),
  };
}
