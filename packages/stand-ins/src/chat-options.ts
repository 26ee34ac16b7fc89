import { badRequest } from './errors.js';
import type { Body } from './validate.js';

/*
 * The request fields that shape a chat answer besides the messages: `tools`, `tool_choice` and
 * `response_format`, checked as vLLM's OpenAI server checks them (a 400 names the field).
 */

export interface ToolSpec {
  name: string;
  /** The function's JSON Schema (absent: any object). */
  parameters: unknown;
}

/** 'auto' when tools are given and tool_choice is not; a named function as `{name}`. */
export type ToolChoice = 'none' | 'auto' | 'required' | { name: string };

export type OutputFormat =
  { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; schema: unknown };

export interface ChatOptions {
  tools: ToolSpec[];
  toolChoice: ToolChoice;
  format: OutputFormat;
}

function invalid(message: string, param: string, code: string | null = 'invalid_value') {
  return badRequest(message, param, code);
}

function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readTool(tool: unknown, index: number): ToolSpec {
  const fn = isObject(tool) ? tool.function : undefined;
  const name = isObject(fn) ? fn.name : undefined;
  if (!isObject(tool) || tool.type !== 'function' || typeof name !== 'string' || name === '') {
    throw invalid(
      `Invalid 'tools[${index}]': expected {type: 'function', function: {name, parameters?}}.`,
      `tools[${index}]`,
    );
  }
  const parameters = (fn as Body).parameters;
  if (parameters !== undefined && parameters !== null && !isObject(parameters)) {
    throw invalid(
      `Invalid type for 'tools[${index}].function.parameters': expected an object.`,
      `tools[${index}].function.parameters`,
      'invalid_type',
    );
  }
  return { name, parameters: parameters ?? undefined };
}

function readTools(body: Body, maxTools: number): ToolSpec[] {
  const tools = body.tools;
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) {
    throw invalid("Invalid type for 'tools': expected an array.", 'tools', 'invalid_type');
  }
  if (tools.length > maxTools) {
    throw invalid(
      `Invalid 'tools': array too long. Expected an array with maximum length ${maxTools}, but got an array with length ${tools.length} instead.`,
      'tools',
      'array_above_max_length',
    );
  }
  return tools.map(readTool);
}

function namedFunction(choice: Body, tools: readonly ToolSpec[]): { name: string } {
  const fn = choice.function;
  const name = isObject(fn) ? fn.name : undefined;
  if (typeof name !== 'string' || name === '') {
    throw invalid(
      "Invalid 'tool_choice'. Correct usage: {type: 'function', function: {name: 'my_function'}}.",
      'tool_choice',
    );
  }
  if (!tools.some((tool) => tool.name === name)) {
    throw invalid(
      "The tool specified in 'tool_choice' does not match any of the specified 'tools'.",
      'tool_choice',
    );
  }
  return { name };
}

function readToolChoice(body: Body, tools: readonly ToolSpec[]): ToolChoice {
  const choice = body.tool_choice;
  if (choice === undefined || choice === null) return tools.length > 0 ? 'auto' : 'none';
  if (choice === 'none') return 'none';
  if (tools.length === 0) {
    throw invalid("When using 'tool_choice', 'tools' must be set.", 'tool_choice', null);
  }
  if (choice === 'auto' || choice === 'required') return choice;
  if (isObject(choice)) return namedFunction(choice, tools);
  throw invalid(
    `Invalid value for 'tool_choice': ${JSON.stringify(choice)}. Only named tools, "none", "auto" or "required" are supported.`,
    'tool_choice',
  );
}

function readFormat(body: Body): OutputFormat {
  const format = body.response_format;
  if (format === undefined || format === null) return { type: 'text' };
  if (!isObject(format)) {
    throw invalid(
      "Invalid type for 'response_format': expected an object.",
      'response_format',
      'invalid_type',
    );
  }
  if (format.type === 'text' || format.type === 'json_object') return { type: format.type };
  if (format.type !== 'json_schema') {
    throw invalid(
      `Invalid value: '${String(format.type)}'. Supported values are: 'text', 'json_object', and 'json_schema'.`,
      'response_format.type',
    );
  }
  const spec = format.json_schema;
  if (!isObject(spec) || typeof spec.name !== 'string' || !isObject(spec.schema ?? {})) {
    throw invalid(
      "Invalid 'response_format.json_schema': expected {name, schema?, strict?}.",
      'response_format.json_schema',
    );
  }
  return { type: 'json_schema', schema: spec.schema ?? undefined };
}

/** Tools, tool choice and output format of a chat request; maxTools: the server's limit. */
export function readChatOptions(body: Body, maxTools = Infinity): ChatOptions {
  const tools = readTools(body, maxTools);
  return { tools, toolChoice: readToolChoice(body, tools), format: readFormat(body) };
}
