/*
 * Responses API input items: normalised (every item typed and given an id, as the reference
 * stores them) and checked, so what is stored and what is translated are the same items. A
 * problem is a 400 naming the item's path (`input[2].content[0].type`), never its content.
 */
import { GatewayError, type ResponseItemRecord } from '@gateway/contracts';
import {
  newFunctionCallId,
  newFunctionCallOutputId,
  newMessageId,
  newReasoningId,
} from './response-ids.js';

export type InputItem = ResponseItemRecord;

const MESSAGE_ROLES = new Set(['user', 'system', 'developer', 'assistant']);
/** Item types a chat model can take (reasoning is accepted and not passed on: see chat-messages). */
const ITEM_TYPES = new Set([
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
  'item_reference',
]);
const ITEM_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function invalidInput(message: string, param: string): GatewayError {
  return new GatewayError('invalid_request_body', message, { param });
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `input` as items: a string is one user message, as the reference stores it. */
export function normalizeInput(input: string | Record<string, unknown>[] | undefined): InputItem[] {
  if (input === undefined) return [];
  if (typeof input === 'string') {
    return [messageItem(newMessageId(), 'user', [{ type: 'input_text', text: input }])];
  }
  return input.map((item, index) => normalizeItem(item, `input[${index}]`));
}

function messageItem(id: string, role: string, content: unknown[]): InputItem {
  return { id, type: 'message', role, content };
}

function normalizeItem(item: Record<string, unknown>, path: string): InputItem {
  // The reference's "easy" message has no `type`, only a role.
  const type = item.type ?? (item.role === undefined ? undefined : 'message');
  if (typeof type !== 'string' || !ITEM_TYPES.has(type)) {
    throw invalidInput(
      `${path}.type must be one of ${[...ITEM_TYPES].join(', ')} (built-in tool items are not served)`,
      `${path}.type`,
    );
  }
  const id = itemId(item.id, path);
  switch (type) {
    case 'message':
      return normalizeMessage(item, id ?? newMessageId(), path);
    case 'function_call':
      requireStrings(item, ['call_id', 'name', 'arguments'], path);
      return { ...item, type, id: id ?? newFunctionCallId(), status: item.status ?? 'completed' };
    case 'function_call_output':
      requireStrings(item, ['call_id'], path);
      if (typeof item.output !== 'string' && !Array.isArray(item.output)) {
        throw invalidInput(`${path}.output must be a string or a list of parts`, `${path}.output`);
      }
      return { ...item, type, id: id ?? newFunctionCallOutputId() };
    case 'reasoning':
      return { ...item, type, id: id ?? newReasoningId() };
    default:
      if (id === undefined) throw invalidInput(`${path}.id is required`, `${path}.id`);
      return { type: 'item_reference', id };
  }
}

function itemId(id: unknown, path: string): string | undefined {
  if (id === undefined || id === null) return undefined;
  if (typeof id !== 'string' || !ITEM_ID.test(id)) {
    throw invalidInput(`${path}.id must be 1–128 letters, digits, _ or -`, `${path}.id`);
  }
  return id;
}

function requireStrings(item: Record<string, unknown>, fields: string[], path: string): void {
  for (const field of fields) {
    if (typeof item[field] !== 'string') {
      throw invalidInput(`${path}.${field} must be a string`, `${path}.${field}`);
    }
  }
}

function normalizeMessage(item: Record<string, unknown>, id: string, path: string): InputItem {
  const role = item.role;
  if (typeof role !== 'string' || !MESSAGE_ROLES.has(role)) {
    throw invalidInput(`${path}.role must be user, system, developer or assistant`, `${path}.role`);
  }
  const textType = role === 'assistant' ? 'output_text' : 'input_text';
  const content =
    typeof item.content === 'string'
      ? [textPart(textType, item.content)]
      : Array.isArray(item.content)
        ? item.content.map((part, index) => checkPart(part, role, `${path}.content[${index}]`))
        : undefined;
  if (content === undefined) {
    throw invalidInput(`${path}.content must be a string or a list of parts`, `${path}.content`);
  }
  return {
    ...item,
    type: 'message',
    id,
    role,
    content,
    ...(role === 'assistant' ? { status: item.status ?? 'completed' } : {}),
  };
}

const textPart = (type: string, text: string) =>
  type === 'output_text' ? { type, text, annotations: [] } : { type, text };

const PART_TYPES: Record<'input' | 'assistant', ReadonlySet<string>> = {
  input: new Set(['input_text', 'input_image', 'input_file']),
  assistant: new Set(['output_text', 'input_text', 'refusal']),
};

function checkPart(part: unknown, role: string, path: string): Record<string, unknown> {
  const allowed = PART_TYPES[role === 'assistant' ? 'assistant' : 'input'];
  if (!isObject(part) || typeof part.type !== 'string' || !allowed.has(part.type)) {
    throw invalidInput(
      `${path}.type must be one of ${[...allowed].join(', ')} for a ${role} message`,
      `${path}.type`,
    );
  }
  const field = part.type === 'refusal' ? 'refusal' : part.type.endsWith('_text') ? 'text' : null;
  if (field !== null && typeof part[field] !== 'string') {
    throw invalidInput(`${path}.${field} must be a string`, `${path}.${field}`);
  }
  return part;
}
