import { badRequest } from './errors.js';

/*
 * The chat message schema of the reference API, checked the way vLLM and OpenAI check it: the
 * shape of every message and content part (a 400 names the offending field), and nothing
 * stricter. Which part may appear in which role, and whether a `tool` message answers an earlier
 * call, is left to the model, as vLLM does.
 */

export interface ToolCallParam {
  id: string;
  type?: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessageParam {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';
  /** A string, content parts, or null / absent on an assistant (or function) message. */
  content?: unknown;
  name?: string;
  tool_calls?: ToolCallParam[];
  tool_call_id?: string;
  function_call?: { name: string; arguments: string };
  refusal?: string | null;
}

type Fields = Record<string, unknown>;

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
/** Roles whose message may leave content out (a call instead of text). */
const CONTENT_OPTIONAL = new Set(['assistant', 'function']);
const IMAGE_DETAILS = new Set(['auto', 'low', 'high']);

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function invalidType(path: string, expected: string, value: unknown): Error {
  return badRequest(
    `Invalid type for '${path}': expected ${expected}, but got ${kindOf(value)} instead.`,
    path,
    'invalid_type',
  );
}

function missing(path: string): Error {
  return badRequest(`Missing required parameter: '${path}'.`, path, 'missing_required_parameter');
}

function absent(value: unknown): boolean {
  return value === undefined || value === null;
}

function objectAt(fields: Fields, key: string, path: string): Fields {
  const value = fields[key];
  if (absent(value)) throw missing(`${path}.${key}`);
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidType(`${path}.${key}`, 'an object', value);
  }
  return value as Fields;
}

function stringAt(fields: Fields, key: string, path: string, required = true): void {
  const value = fields[key];
  if (absent(value)) {
    if (required) throw missing(`${path}.${key}`);
    return;
  }
  if (typeof value !== 'string') throw invalidType(`${path}.${key}`, 'a string', value);
}

function checkImage(part: Fields, path: string): void {
  // vLLM also takes the URL as a bare string.
  if (typeof part.image_url === 'string') return;
  const image = objectAt(part, 'image_url', path);
  stringAt(image, 'url', `${path}.image_url`);
  if (!absent(image.detail) && !IMAGE_DETAILS.has(image.detail as string)) {
    throw badRequest(
      `Invalid value: '${String(image.detail)}'. Supported values are: 'auto', 'low', and 'high'.`,
      `${path}.image_url.detail`,
      'invalid_value',
    );
  }
}

function checkFile(part: Fields, path: string): void {
  const file = objectAt(part, 'file', path);
  for (const key of ['file_data', 'file_id', 'filename'])
    stringAt(file, key, `${path}.file`, false);
}

function checkAudio(part: Fields, path: string): void {
  const audio = objectAt(part, 'input_audio', path);
  stringAt(audio, 'data', `${path}.input_audio`);
  stringAt(audio, 'format', `${path}.input_audio`);
}

const PART_CHECKS: Record<string, (part: Fields, path: string) => void> = {
  text: (part, path) => stringAt(part, 'text', path),
  refusal: (part, path) => stringAt(part, 'refusal', path),
  image_url: checkImage,
  input_audio: checkAudio,
  file: checkFile,
};

function checkPart(part: unknown, path: string): void {
  if (typeof part !== 'object' || part === null || Array.isArray(part)) {
    throw invalidType(path, 'an object', part);
  }
  const type = (part as Fields).type;
  const check = typeof type === 'string' ? PART_CHECKS[type] : undefined;
  if (check === undefined) {
    const supported = Object.keys(PART_CHECKS).map((name) => `'${name}'`);
    throw badRequest(
      `Invalid value: '${String(type)}'. Supported values are: ${supported.join(', ')}.`,
      `${path}.type`,
      'invalid_value',
    );
  }
  check(part as Fields, path);
}

function checkContent(message: Fields, path: string): void {
  const { content } = message;
  if (absent(content)) {
    if (!CONTENT_OPTIONAL.has(message.role as string)) throw missing(`${path}.content`);
    return;
  }
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) {
    throw invalidType(`${path}.content`, 'one of a string or array of objects', content);
  }
  content.forEach((part: unknown, index) => checkPart(part, `${path}.content[${index}]`));
}

function checkToolCalls(message: Fields, path: string): void {
  const calls = message.tool_calls;
  if (absent(calls)) return;
  if (!Array.isArray(calls)) throw invalidType(`${path}.tool_calls`, 'an array', calls);
  calls.forEach((call: unknown, index) => {
    const callPath = `${path}.tool_calls[${index}]`;
    if (typeof call !== 'object' || call === null) throw invalidType(callPath, 'an object', call);
    stringAt(call as Fields, 'id', callPath);
    const fn = objectAt(call as Fields, 'function', callPath);
    stringAt(fn, 'name', `${callPath}.function`);
    stringAt(fn, 'arguments', `${callPath}.function`);
  });
}

function checkMessage(message: unknown, index: number): void {
  const path = `messages[${index}]`;
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    throw invalidType(path, 'an object', message);
  }
  const fields = message as Fields;
  if (typeof fields.role !== 'string' || !ROLES.has(fields.role)) {
    throw badRequest(
      `Invalid value for '${path}.role': expected one of 'system', 'developer', 'user', 'assistant', 'tool', or 'function'.`,
      `${path}.role`,
      'invalid_value',
    );
  }
  checkContent(fields, path);
  stringAt(fields, 'name', path, fields.role === 'function');
  if (fields.role === 'tool') stringAt(fields, 'tool_call_id', path);
  if (fields.role !== 'assistant') return;
  checkToolCalls(fields, path);
  if (!absent(fields.function_call)) {
    const call = objectAt(fields, 'function_call', path);
    stringAt(call, 'name', `${path}.function_call`);
    stringAt(call, 'arguments', `${path}.function_call`);
  }
  stringAt(fields, 'refusal', path, false);
}

/** `messages` of a chat request, checked; a 400 names the first field that is wrong. */
export function validateChatMessages(value: unknown): ChatMessageParam[] {
  if (value === undefined || value === null) throw missing('messages');
  if (!Array.isArray(value)) throw invalidType('messages', 'an array', value);
  if (value.length === 0) {
    throw badRequest("Invalid 'messages': expected a non-empty array.", 'messages', 'empty_array');
  }
  value.forEach(checkMessage);
  return value as ChatMessageParam[];
}
