/*
 * Responses items → chat messages, for models that speak Chat Completions (all of ours). The
 * items are normalised (input-items.ts) and references already resolved. Consecutive function
 * calls join the assistant message before them (parallel tool calls are one chat message), and
 * each output becomes a `tool` message. Reasoning items are not passed on: the nodes and the
 * provider take no reasoning input in chat, and their text is the model's own earlier output.
 */
import { invalidInput, type InputItem } from './input-items.js';

type Part = Record<string, unknown>;
export type ChatMessageOut = Record<string, unknown> & { role: string };

export function messagesOf(items: readonly InputItem[], path = 'input'): ChatMessageOut[] {
  const messages: ChatMessageOut[] = [];
  items.forEach((item, index) => {
    const at = `${path}[${index}]`;
    if (item.type === 'message') messages.push(messageOf(item, at));
    else if (item.type === 'function_call') addToolCall(messages, item);
    else if (item.type === 'function_call_output') messages.push(toolMessageOf(item, at));
    else if (item.type === 'item_reference') {
      throw new Error(`unresolved item_reference at ${at}`);
    }
  });
  return messages;
}

function messageOf(item: InputItem, path: string): ChatMessageOut {
  const role = item.role as string;
  const parts = item.content as Part[];
  if (role === 'assistant') return { role, content: assistantText(parts) };
  if (role !== 'user') {
    return { role, content: parts.map((part, i) => textOnly(part, `${path}.content[${i}]`)) };
  }
  return { role, content: parts.map((part, i) => userPart(part, `${path}.content[${i}]`)) };
}

/** Assistant text as one string: chat assistant messages carry no output parts. */
function assistantText(parts: Part[]): string {
  return parts.map((part) => String(part.type === 'refusal' ? part.refusal : part.text)).join('');
}

function textOnly(part: Part, path: string): Part {
  if (part.type !== 'input_text') {
    throw invalidInput(`${path}: system and developer messages take text only`, `${path}.type`);
  }
  return { type: 'text', text: part.text };
}

function userPart(part: Part, path: string): Part {
  if (part.type === 'input_text') return { type: 'text', text: part.text };
  if (part.type === 'input_image') return imagePart(part, path);
  return filePart(part, path);
}

function imagePart(part: Part, path: string): Part {
  if (typeof part.image_url !== 'string') {
    throw invalidInput(
      `${path}.image_url is required: images go inline (data URL) or by URL; there is no files API`,
      `${path}.image_url`,
    );
  }
  const detail = part.detail === undefined || part.detail === null ? {} : { detail: part.detail };
  return { type: 'image_url', image_url: { url: part.image_url, ...detail } };
}

function filePart(part: Part, path: string): Part {
  if (part.file_url !== undefined && part.file_url !== null) {
    throw invalidInput(`${path}.file_url is not served: send file_data`, `${path}.file_url`);
  }
  const file: Part = {};
  for (const field of ['file_data', 'file_id', 'filename']) {
    if (typeof part[field] === 'string') file[field] = part[field];
  }
  return { type: 'file', file };
}

function addToolCall(messages: ChatMessageOut[], item: InputItem): void {
  const call = {
    id: item.call_id,
    type: 'function',
    function: { name: item.name, arguments: item.arguments },
  };
  const last = messages.at(-1);
  if (last?.role === 'assistant') {
    last.tool_calls = [...((last.tool_calls as unknown[] | undefined) ?? []), call];
    return;
  }
  messages.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function toolMessageOf(item: InputItem, path: string): ChatMessageOut {
  const output = item.output as string | Part[];
  const content =
    typeof output === 'string'
      ? output
      : output
          .map((part, i) => {
            if (part.type !== 'input_text' && part.type !== 'output_text') {
              throw invalidInput(
                `${path}.output[${i}]: tool outputs take text parts only`,
                `${path}.output[${i}].type`,
              );
            }
            return String(part.text);
          })
          .join('');
  return { role: 'tool', tool_call_id: item.call_id, content };
}
