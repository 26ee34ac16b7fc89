import { countTokens, decode, encode } from 'gpt-tokenizer/encoding/o200k_base';

/*
 * One tokenizer for the whole gateway (o200k_base BPE, via gpt-tokenizer): edge sizes holds with
 * it, the worker counts tokens an upstream did not report (a cancelled stream has no usage
 * chunk), and the stand-in model node reports usage with it. Using the same counter everywhere
 * keeps the hold estimate and the settled usage comparable.
 */

export interface ChatMessageLike {
  role: string;
  content?: unknown;
  name?: unknown;
}

/**
 * Per-message framing of the chat format (`<|im_start|>role ... <|im_end|>`), and the tokens
 * that prime the assistant's reply. These are OpenAI's published figures for its chat models.
 */
export const TOKENS_PER_MESSAGE = 3;
export const TOKENS_PER_NAME = 1;
export const REPLY_PRIMING_TOKENS = 3;

export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : countTokens(text);
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (content === undefined || content === null) return '';
  // Structured content (parts, tool calls) is counted by its JSON text: an over-estimate, which
  // is the safe side for a hold.
  return JSON.stringify(content);
}

/** Prompt tokens of a chat request's messages, framing included. */
export function countChatPromptTokens(messages: readonly ChatMessageLike[]): number {
  let total = REPLY_PRIMING_TOKENS;
  for (const message of messages) {
    total += TOKENS_PER_MESSAGE + countTextTokens(message.role);
    total += countTextTokens(contentText(message.content));
    if (typeof message.name === 'string') total += TOKENS_PER_NAME + countTextTokens(message.name);
  }
  return total;
}

/** The text split at token boundaries: joined back, the pieces give the text exactly. */
export function splitIntoTokens(text: string): string[] {
  const pieces: string[] = [];
  let pending: number[] = [];
  for (const token of encode(text)) {
    pending.push(token);
    const piece = decode(pending);
    // A multi-byte character may span tokens: wait until the piece decodes cleanly.
    if (!piece.endsWith('\uFFFD')) {
      pieces.push(piece);
      pending = [];
    }
  }
  if (pending.length > 0) pieces.push(decode(pending));
  return pieces;
}
