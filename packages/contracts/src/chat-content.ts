import { GatewayError } from './errors.js';
import { PART_MODALITIES, type ChatMessage } from './schemas/chat-messages.js';
import { LIMITS } from './schemas/limits.js';

/*
 * What a chat request's content asks of its model beyond text. Edge derives it once from the
 * validated messages; billing's admission refuses (400, naming the first part) a kind the catalog
 * model does not declare, and sizes the hold with the model's per-image token ceiling, in the
 * same statement that places the hold.
 */

/** `remote_image`: an image given by http(s) URL, which the model node would fetch itself. */
export const MEDIA_KINDS = ['image', 'remote_image', 'audio', 'file'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

export interface MediaUse {
  kind: MediaKind;
  /** The first part of this kind, e.g. `messages[1].content[0]`. */
  param: string;
}

export interface ChatMediaUse {
  /** One entry per kind used, in the order the kinds first appear. */
  kinds: MediaUse[];
  /** Image parts of every message: each adds the model's `image_tokens` to the hold. */
  imageCount: number;
}

type Part = { type: string; image_url?: { url?: unknown } };

function partsOf(message: ChatMessage): readonly Part[] {
  const content = (message as { content?: unknown }).content;
  return Array.isArray(content) ? (content as Part[]) : [];
}

function kindOf(part: Part): MediaKind | undefined {
  if (part.type === 'image_url') {
    const url = part.image_url?.url;
    return typeof url === 'string' && !url.startsWith('data:') ? 'remote_image' : 'image';
  }
  return part.type === 'input_audio' ? 'audio' : part.type === 'file' ? 'file' : undefined;
}

export function chatMediaUse(messages: readonly ChatMessage[]): ChatMediaUse {
  const kinds = new Map<MediaKind, string>();
  let imageCount = 0;
  messages.forEach((message, m) => {
    partsOf(message).forEach((part, p) => {
      const kind = kindOf(part);
      if (kind === undefined) return;
      if (part.type === 'image_url') imageCount += 1;
      if (!kinds.has(kind)) kinds.set(kind, `messages[${m}].content[${p}]`);
    });
  });
  return { kinds: [...kinds].map(([kind, param]) => ({ kind, param })), imageCount };
}

const invalid = (message: string, param: string) =>
  new GatewayError('invalid_request_body', message, { param });

/**
 * Rules of the message schema that JSON Schema states poorly: an assistant message says
 * something (content, or a tool / function call), and a request carries a bounded number of
 * image, audio and file parts (each adds a token ceiling to its hold).
 */
export function checkChatMessageRules(messages: readonly ChatMessage[]): void {
  let mediaParts = 0;
  messages.forEach((message, m) => {
    if (message.role === 'assistant' && message.content == null) {
      const calls = (message.tool_calls?.length ?? 0) > 0 || message.function_call != null;
      if (!calls) {
        throw invalid(
          `messages[${m}].content is required unless tool_calls or function_call is present`,
          `messages[${m}].content`,
        );
      }
    }
    partsOf(message).forEach((part, p) => {
      if (!(part.type in PART_MODALITIES)) return;
      mediaParts += 1;
      if (mediaParts > LIMITS.mediaPartsMaxItems) {
        throw invalid(
          `a request may carry at most ${LIMITS.mediaPartsMaxItems} image, audio and file parts`,
          `messages[${m}].content[${p}]`,
        );
      }
    });
  });
}
