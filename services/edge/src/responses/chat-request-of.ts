/*
 * A Responses request (its conversation already rebuilt) → the chat completion request the job
 * runs. Only function tools exist on chat models: a built-in tool type is a 400 naming it.
 * `store`, `metadata`, `previous_response_id`, `include`, `truncation` and `stream_options` are
 * the gateway's own business and reach no model.
 */
import { validateChatCompletion, type ResponsesRequest } from '@gateway/contracts';
import { DEFAULT_MAX_MESSAGE_BYTES } from '@gateway/messaging';
import type { Conversation } from './conversation.js';
import { invalidInput } from './input-items.js';
import { messagesOf, type ChatMessageOut } from './items-to-messages.js';

type Json = Record<string, unknown>;

export function chatRequestOf(request: ResponsesRequest, messages: ChatMessageOut[]): Json {
  const instructions =
    request.instructions === undefined ? [] : [{ role: 'system', content: request.instructions }];
  const chat: Json = { model: request.model, messages: [...instructions, ...messages] };
  const copy = (from: keyof ResponsesRequest & string, to: string = from) => {
    if (request[from] !== undefined) chat[to] = request[from];
  };
  copy('stream');
  copy('temperature');
  copy('top_p');
  copy('parallel_tool_calls');
  copy('max_output_tokens', 'max_completion_tokens');
  copy('service_tier');
  copy('user');
  copy('safety_identifier');
  copy('prompt_cache_key');
  if (request.tools !== undefined && request.tools.length > 0)
    chat.tools = request.tools.map(toolOf);
  if (request.tool_choice !== undefined) chat.tool_choice = toolChoiceOf(request.tool_choice);
  if (request.reasoning?.effort !== undefined) chat.reasoning_effort = request.reasoning.effort;
  if (request.text?.verbosity !== undefined) chat.verbosity = request.text.verbosity;
  const format =
    request.text?.format === undefined ? undefined : responseFormatOf(request.text.format);
  if (format !== undefined) chat.response_format = format;
  return chat;
}

function toolOf(tool: Json, index: number): Json {
  const path = `tools[${index}]`;
  if (tool.type !== 'function') {
    throw invalidInput(
      `${path}.type ${JSON.stringify(String(tool.type).slice(0, 64))} is not served: only function tools run on these models`,
      `${path}.type`,
    );
  }
  if (typeof tool.name !== 'string' || tool.name === '') {
    throw invalidInput(`${path}.name must be a non-empty string`, `${path}.name`);
  }
  const fn: Json = { name: tool.name };
  for (const field of ['description', 'parameters', 'strict']) {
    if (tool[field] !== undefined && tool[field] !== null) fn[field] = tool[field];
  }
  return { type: 'function', function: fn };
}

function toolChoiceOf(choice: string | Json): string | Json {
  if (typeof choice === 'string') {
    if (['auto', 'none', 'required'].includes(choice)) return choice;
    throw invalidInput('tool_choice must be auto, none, required or a function', 'tool_choice');
  }
  if (choice.type === 'function' && typeof choice.name === 'string') {
    return { type: 'function', function: { name: choice.name } };
  }
  throw invalidInput(
    'tool_choice: only {"type": "function", "name": ...} is served',
    'tool_choice.type',
  );
}

function responseFormatOf(format: Json): Json | undefined {
  if (format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type !== 'json_schema') {
    throw invalidInput(
      'text.format.type must be text, json_object or json_schema',
      'text.format.type',
    );
  }
  if (
    typeof format.name !== 'string' ||
    typeof format.schema !== 'object' ||
    format.schema === null
  ) {
    throw invalidInput('text.format needs a name and a schema for json_schema', 'text.format');
  }
  const schema: Json = { name: format.name, schema: format.schema };
  if (typeof format.strict === 'boolean') schema.strict = format.strict;
  if (typeof format.description === 'string') schema.description = format.description;
  return { type: 'json_schema', json_schema: schema };
}

/**
 * The job carries the rebuilt conversation in one broker message: a conversation over this is
 * refused before any hold (400), not published to fail on the bus (the chat path's own bodies
 * are bounded far lower by the JSON body limit). Room is left for the job's other fields.
 */
export const REBUILT_REQUEST_MAX_BYTES = DEFAULT_MAX_MESSAGE_BYTES - 64 * 1024;

/** The chat request the job runs: the chain, then the input; checked by chat's own rules. */
export function rebuiltChatRequest(request: ResponsesRequest, conversation: Conversation) {
  const chat = validateChatCompletion(
    chatRequestOf(request, messagesOf([...conversation.history, ...conversation.input])),
  );
  const bytes = Buffer.byteLength(JSON.stringify(chat));
  if (bytes > REBUILT_REQUEST_MAX_BYTES) {
    throw invalidInput(
      `the conversation rebuilt from previous_response_id and the input is ${bytes} bytes; ` +
        `at most ${REBUILT_REQUEST_MAX_BYTES} fit one job (start a new chain)`,
      request.previous_response_id === undefined ? 'input' : 'previous_response_id',
    );
  }
  return chat;
}
