import { countTextTokens } from '@gateway/tokenizer';
import type { ChatMessageParam } from './chat-messages.js';

/*
 * Prompt tokens of a chat request, counted as a real model bills what it reads. Every figure
 * here stays at or below the gateway's hold estimate (per message 3 + role + content texts + the
 * JSON text of every other field, 1445 per image, the base64 length of audio and files), so a
 * settled request never costs more than its hold.
 */

/** `<|im_start|>role … <|im_end|>` around each message: OpenAI's published figure. */
const TOKENS_PER_MESSAGE = 3;
/**
 * Images are not decoded, so each counts as the reference's figure for a typical picture:
 * 85 tokens at `detail: 'low'`, otherwise 85 + 170 per 512-pixel tile of the image scaled to
 * 768 pixels on its short side, which for a 1024×1024 image is 4 tiles: 765.
 */
export const IMAGE_TOKENS_LOW_DETAIL = 85;
export const IMAGE_TOKENS_HIGH_DETAIL = 765;
/** Audio and file parts: one token per 8 characters of their base64 data (6 bytes). */
export const MEDIA_BASE64_CHARS_PER_TOKEN = 8;
/** Fields besides the messages that a chat template renders into the prompt. */
const RENDERED_FIELDS = ['tools', 'tool_choice', 'response_format', 'functions'] as const;

type Part = Record<string, unknown>;

function mediaTokens(data: unknown): number {
  return typeof data === 'string' ? Math.ceil(data.length / MEDIA_BASE64_CHARS_PER_TOKEN) : 0;
}

function imageTokens(part: Part): number {
  const image = part.image_url;
  const low = typeof image === 'object' && image !== null && (image as Part).detail === 'low';
  return low ? IMAGE_TOKENS_LOW_DETAIL : IMAGE_TOKENS_HIGH_DETAIL;
}

/** Fixed-size inputs of a part (images, audio, files); text parts count as text instead. */
function partMediaTokens(part: Part): number {
  switch (part.type) {
    case 'image_url':
      return imageTokens(part);
    case 'input_audio':
      return mediaTokens((part.input_audio as Part).data);
    case 'file':
      return mediaTokens((part.file as Part).file_data);
    default:
      return 0;
  }
}

/** The text the model reads in a content: the string, or its text and refusal parts joined. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: Part) => (part.type === 'refusal' ? part.refusal : part.text))
    .filter((text): text is string => typeof text === 'string')
    .join('');
}

function callTexts(message: ChatMessageParam): string[] {
  const calls = (message.tool_calls ?? []).map((call) => call.function);
  if (message.function_call) calls.push(message.function_call);
  return calls.flatMap((fn) => [fn.name, fn.arguments]);
}

export function messageTokens(message: ChatMessageParam): number {
  const content = message.content;
  const media = Array.isArray(content)
    ? content.reduce((sum: number, part: Part) => sum + partMediaTokens(part), 0)
    : 0;
  const texts = [message.role, contentText(content), ...callTexts(message)];
  for (const field of [message.tool_call_id, message.name, message.refusal]) {
    if (typeof field === 'string') texts.push(field);
  }
  return TOKENS_PER_MESSAGE + media + texts.reduce((sum, t) => sum + countTextTokens(t), 0);
}

/** Prompt tokens of a validated chat request: its messages and the fields rendered with them. */
export function chatPromptTokens(
  messages: readonly ChatMessageParam[],
  body: Record<string, unknown>,
): number {
  const rendered = RENDERED_FIELDS.filter((name) => body[name] !== undefined).map((name) =>
    countTextTokens(JSON.stringify(body[name])),
  );
  return [...messages.map(messageTokens), ...rendered].reduce((sum, tokens) => sum + tokens, 0);
}
