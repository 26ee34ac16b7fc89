import { createHash } from 'node:crypto';
import { countTextTokens } from '@gateway/tokenizer';

/*
 * The stand-ins answer with deterministic text: the full answer is a function of one seed text
 * (the last user message, or a TGI input), so tests can predict it, and a client that continues
 * a truncated answer gets exactly the rest of it.
 */

/** Each word is one o200k token, with or without a leading space, capitalised or not. */
const WORDS = [
  'the', 'a', 'model', 'answer', 'stream', 'token', 'light', 'river', 'stone', 'quiet',
  'green', 'small', 'early', 'north', 'garden', 'window', 'paper', 'simple', 'clear', 'water',
  'bright', 'open', 'music', 'number', 'letter', 'market', 'winter', 'summer', 'morning',
  'table', 'chair', 'road', 'city', 'field', 'forest', 'cloud', 'signal', 'value', 'order',
  'system', 'slow', 'fast', 'warm', 'cold', 'house', 'bridge', 'story', 'friend', 'travel',
  'follow', 'under', 'over', 'across', 'before', 'after', 'near', 'every', 'often', 'always',
  'plain', 'long', 'short', 'yellow', 'blue', 'round', 'square', 'little', 'great', 'old',
  'new', 'good', 'kind',
]; // prettier-ignore

const SENTENCE_WORDS_MIN = 4;
const SENTENCE_WORDS_MAX = 10;
const SHORT_SENTENCE_WORDS = 6;

export interface AnswerLength {
  /** Natural answer length range in tokens; the hash of the seed picks a value inside it. */
  answerTokensMin: number;
  answerTokensMax: number;
}

/** 32 bits of SHA-256: stable across processes and platforms, unlike Math.random. */
export function hash32(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0);
}

/** mulberry32: small, fast and good enough to pick words. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** One vocabulary word (a single o200k token), chosen by random. */
export function pickWord(random: () => number): string {
  return WORDS[Math.floor(random() * WORDS.length)] ?? 'the';
}

function sentence(random: () => number, wordCount: number): string {
  const words = Array.from({ length: wordCount }, () => pickWord(random));
  const first = words[0] ?? 'the';
  words[0] = first.charAt(0).toUpperCase() + first.slice(1);
  return `${words.join(' ')}.`;
}

/** A six-word sentence chosen by the seed text (a closing remark, not a whole answer). */
export function shortSentence(seedText: string): string {
  return sentence(seededRandom(hash32(seedText)), SHORT_SENTENCE_WORDS);
}

/** The full, uncut answer for a seed text. Its token count lies near the chosen length. */
export function answerText(seedText: string, length: AnswerLength): string {
  const random = seededRandom(hash32(seedText));
  const span = length.answerTokensMax - length.answerTokensMin + 1;
  const targetTokens = length.answerTokensMin + Math.floor(random() * span);
  const sentences: string[] = [];
  let tokens = 0;
  while (tokens < targetTokens) {
    // Words are one token each and the full stop another, so this lands close to the target.
    const room = Math.max(1, targetTokens - tokens - 1);
    const wanted =
      SENTENCE_WORDS_MIN + Math.floor(random() * (SENTENCE_WORDS_MAX - SENTENCE_WORDS_MIN + 1));
    sentences.push(sentence(random, Math.min(wanted, room)));
    tokens = countTextTokens(sentences.join(' '));
  }
  return sentences.join(' ');
}

export interface ChatMessage {
  role: string;
  content?: unknown;
  name?: unknown;
}

/** Text of a message's content: a string, or the text parts of a content array. */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) =>
      typeof part === 'object' &&
      part !== null &&
      typeof (part as { text?: unknown }).text === 'string'
        ? (part as { text: string }).text
        : '',
    )
    .join('');
}

export interface Conversation {
  /** Text the answer is derived from: the last user message. */
  seedText: string;
  /** Content of a trailing assistant message: what the client says was already generated. */
  assistantPrefix: string;
}

export function readConversation(messages: readonly ChatMessage[]): Conversation {
  const last = messages[messages.length - 1];
  const assistantPrefix = last?.role === 'assistant' ? messageText(last.content) : '';
  const lastUser = [...messages].reverse().find((message) => message.role === 'user') ?? last;
  return { seedText: messageText(lastUser?.content), assistantPrefix };
}

/** Choice 0 answers the seed itself; other choices of n > 1 get their own answers. */
export function choiceSeed(seedText: string, index: number): string {
  return index === 0 ? seedText : `${seedText}\u0000choice:${index}`;
}

export interface ChoiceAnswer {
  answer: string;
  /** Already generated part of answer ('' unless the conversation continues it). */
  prefix: string;
}

/** The answer for one choice; a trailing assistant message continues it only if it matches. */
export function choiceAnswer(
  conversation: Conversation,
  index: number,
  length: AnswerLength,
): ChoiceAnswer {
  const answer = answerText(choiceSeed(conversation.seedText, index), length);
  const prefix = answer.startsWith(conversation.assistantPrefix)
    ? conversation.assistantPrefix
    : '';
  return { answer, prefix };
}

/**
 * The full answer a stand-in gives for a seed text (last user message, prompt or TGI inputs),
 * so a test can predict generated text; defaults match the stand-ins' default lengths.
 */
export function standInAnswer(
  seedText: string,
  options: { index?: number } & Partial<AnswerLength> = {},
): string {
  const length = {
    answerTokensMin: options.answerTokensMin ?? 30,
    answerTokensMax: options.answerTokensMax ?? 60,
  };
  return answerText(choiceSeed(seedText, options.index ?? 0), length);
}
