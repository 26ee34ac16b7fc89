import { createRequire } from 'node:module';
import type * as O200kBase from 'gpt-tokenizer/encoding/o200k_base';

type Encoding = typeof O200kBase;

/*
 * One tokenizer for the whole gateway (o200k_base BPE, via gpt-tokenizer): edge sizes holds with
 * it, the worker counts tokens an upstream did not report (a cancelled stream has no usage
 * chunk), and the stand-in model node reports usage with it. Using the same counter everywhere
 * keeps the hold estimate and the settled usage comparable.
 *
 * Counting is linear in the input (see "Linear-time slicing" below): BPE is superlinear in the length of one
 * pre-token piece, so text is counted in slices cut where the tokenizer itself cuts, and a run
 * too long to cut (200,000 × "a") counts as its UTF-8 byte length, an upper bound of its tokens.
 * Edge counts with `estimate*`, which give the event loop back between slices.
 */

export interface ChatMessageLike {
  role: string;
  content?: unknown;
  name?: unknown;
  /** Tool calls, `tool_call_id`, `refusal`, ...: every other field is counted too. */
  [field: string]: unknown;
}

/**
 * Per-message framing of the chat format (`<|im_start|>role ... <|im_end|>`), and the tokens
 * that prime the assistant's reply. These are OpenAI's published figures for its chat models.
 */
export const TOKENS_PER_MESSAGE = 3;
export const TOKENS_PER_NAME = 1;
export const REPLY_PRIMING_TOKENS = 3;

// Text that spells a special token (`<|endoftext|>`) is counted as the text it is: by default
// gpt-tokenizer throws on it, which would turn a prompt into a 500.
const AS_PLAIN_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
/** The longest a request may hold the event loop while its tokens are counted. */
const YIELD_AFTER_MS = 5;

const requireModule = createRequire(import.meta.url);
let loaded: Encoding | undefined;

/**
 * The pieces whose merges gpt-tokenizer remembers (its default: 100,000). A cache that size,
 * filled by varied prompts, held 31 MB more heap, and once full every count got slower: a
 * repeated 2 KB prompt took 2.3 to 2.9 ms instead of 0.05 to 0.09 (its Map churns at its capacity: each hit
 * or eviction deletes and re-inserts). At 1,000 a full cache costs 0.4 MB and no time; it still
 * keeps a prompt's repeated words (without it the same prompt took 0.2 to 0.3 ms).
 * docs/benchmarks.md, "2026-12-01, later".
 */
export const MERGE_CACHE_ENTRIES = 1_000;

/**
 * The o200k tables (~70 MB resident) are loaded on first use: a process that never counts
 * (the inference worker, unless an upstream omits its usage) never holds them.
 */
function encoding(): Encoding {
  if (loaded === undefined) {
    loaded = requireModule('gpt-tokenizer/encoding/o200k_base') as Encoding;
    loaded.setMergeCacheSize(MERGE_CACHE_ENTRIES);
  }
  return loaded;
}

/** Loads the tables now (edge, at start), so the first request does not wait for them. */
export function preloadTokenizer(): void {
  encoding();
}

/*
 * Linear-time slicing of text for token counting.
 *
 * BPE cost grows faster than linearly with the length of one pre-token piece: 200,000 × "a" is a
 * single piece and took edge 46 s to count. The text is cut only where the o200k pre-tokenizer
 * itself always starts a new piece (see `isCut`), so the pieces, and the tokens, of the whole
 * text are the pieces of its parts. Between two cuts lies a "word"; words are grouped into
 * slices of about SLICE_CHARS that are tokenized exactly. A word longer than MAX_WORD_CHARS (a run
 * of one letter, base64, a long unpunctuated line) is not tokenized: it counts as its UTF-8 byte
 * length. Every token of a byte-level BPE covers at least one byte, so that is an upper bound of
 * its tokens: a hold sized with it covers what the model can bill, never less.
 */

export const MAX_WORD_CHARS = 256;
const SLICE_CHARS = 16_384;

type TextSlice = { kind: 'exact'; text: string } | { kind: 'bound'; upperBound: number };

/** JavaScript's `\s` (the tokenizer's regex uses it): WhiteSpace and LineTerminator. */
function isWhitespace(code: number): boolean {
  if (code === 0x20 || (code >= 0x09 && code <= 0x0d)) return true;
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

// Punctuation that always starts a piece when it follows a letter or digit (ASCII, and the
// full-width marks CJK text is cut by); not the apostrophe, which can end a word ("it's").
const PUNCTUATION = new Set(
  Array.from('!"#$%&()*+,-.:;<=>?@[]^_`{|}~，。！？；：、（）「」『』《》【】', (c) =>
    c.charCodeAt(0),
  ),
);
const LETTER_OR_DIGIT = /^[\p{L}\p{N}\p{M}]$/u;

/**
 * Whether a pre-token piece certainly starts at `i`: a single space between two non-whitespace
 * characters ("…x y…"), or punctuation right after a letter or digit ("…文，…", "…word.…").
 */
function isCut(text: string, i: number): boolean {
  if (i <= 0 || i + 1 >= text.length) return false;
  const code = text.charCodeAt(i);
  if (code === 0x20) {
    return !isWhitespace(text.charCodeAt(i - 1)) && !isWhitespace(text.charCodeAt(i + 1));
  }
  return PUNCTUATION.has(code) && LETTER_OR_DIGIT.test(text[i - 1]!);
}

/** The next cut at or after `from`, or `text.length`. */
function nextCut(text: string, from: number): number {
  for (let i = from; i < text.length; i++) if (isCut(text, i)) return i;
  return text.length;
}

/** The slices of `text`, in order; their counts add up to the text's count (or a bound of it). */
function* textSlices(text: string): Generator<TextSlice> {
  let sliceStart = 0;
  let wordStart = 0;
  while (wordStart < text.length) {
    const wordEnd = nextCut(text, wordStart + 1);
    if (wordEnd - wordStart > MAX_WORD_CHARS) {
      if (wordStart > sliceStart) yield { kind: 'exact', text: text.slice(sliceStart, wordStart) };
      yield { kind: 'bound', upperBound: Buffer.byteLength(text.slice(wordStart, wordEnd)) };
      sliceStart = wordEnd;
    } else if (wordEnd - sliceStart >= SLICE_CHARS || wordEnd === text.length) {
      yield { kind: 'exact', text: text.slice(sliceStart, wordEnd) };
      sliceStart = wordEnd;
    }
    wordStart = wordEnd;
  }
}

function countSlice(slice: TextSlice): number {
  return slice.kind === 'exact'
    ? encoding().countTokens(slice.text, AS_PLAIN_TEXT)
    : slice.upperBound;
}

/** Tokens of `text` (an upper bound for runs too long to tokenize; exact otherwise). */
export function countTextTokens(text: string): number {
  let total = 0;
  for (const slice of textSlices(text)) total += countSlice(slice);
  return total;
}

/**
 * Counts many texts for one request, never holding the event loop for more than a few
 * milliseconds: after each slice that ran past the budget it yields (setImmediate), so other
 * requests and `/healthz` are served while a 1 MiB prompt is counted.
 */
export class YieldingTokenCounter {
  #total = 0;
  #sliceStartedMs = performance.now();

  get total(): number {
    return this.#total;
  }

  addFixed(tokens: number): void {
    this.#total += tokens;
  }

  async add(text: string): Promise<void> {
    for (const slice of textSlices(text)) {
      this.#total += countSlice(slice);
      if (performance.now() - this.#sliceStartedMs > YIELD_AFTER_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        this.#sliceStartedMs = performance.now();
      }
    }
  }
}

/** `countTextTokens` summed over texts, yielding between slices. */
export async function estimateTextTokens(texts: readonly string[]): Promise<number> {
  const counter = new YieldingTokenCounter();
  for (const text of texts) await counter.add(text);
  return counter.total;
}

/** A content part as the hold counts it: its text, or a fixed bound for base64 media. */
function* partTokens(part: unknown): Generator<string | number> {
  const { type, ...fields } = (part ?? {}) as Record<string, unknown> & { type?: unknown };
  if (type === 'text' && typeof fields.text === 'string') yield fields.text;
  else if (type === 'refusal' && typeof fields.refusal === 'string') yield fields.refusal;
  // Images are bounded by the model's per-image ceiling (catalog `image_tokens`), which billing
  // adds at admission: the URL's text says nothing of the image's size.
  else if (type === 'image_url') return;
  else if (type === 'input_audio' || type === 'file') {
    // A base64 payload never encodes to more tokens than it has characters; no model bills an
    // audio clip or a document above that, so its length is a safe (if generous) bound.
    const { data, file_data: fileData, ...rest } = (fields[type] ?? {}) as Record<string, unknown>;
    const payload = typeof data === 'string' ? data : typeof fileData === 'string' ? fileData : '';
    yield payload.length;
    yield JSON.stringify(rest);
  } else yield JSON.stringify(part);
}

function* contentTokens(content: unknown): Generator<string | number> {
  if (typeof content === 'string') yield content;
  else if (Array.isArray(content)) for (const part of content) yield* partTokens(part);
  else if (content !== undefined && content !== null) yield JSON.stringify(content);
}

/**
 * The texts of a chat prompt and its fixed framing, in one place for both counters below. Every
 * field a model reads is counted: the content, the name, and the JSON text of everything else
 * (tool calls with their arguments, `tool_call_id`, `function_call`, `refusal`, ...), an
 * over-estimate of how a chat template renders them, which is the safe side for a hold.
 */
function* chatPromptParts(messages: readonly ChatMessageLike[]): Generator<string | number> {
  yield REPLY_PRIMING_TOKENS;
  for (const message of messages) {
    const { role, content, name, ...others } = message as ChatMessageLike & Record<string, unknown>;
    yield TOKENS_PER_MESSAGE;
    yield role;
    yield* contentTokens(content);
    if (typeof name === 'string') {
      yield TOKENS_PER_NAME;
      yield name;
    }
    for (const [field, value] of Object.entries(others)) {
      if (value !== undefined && value !== null) yield `${field}: ${JSON.stringify(value)}`;
    }
  }
}

/** Prompt tokens of a chat request's messages, framing included. */
export function countChatPromptTokens(messages: readonly ChatMessageLike[]): number {
  let total = 0;
  for (const part of chatPromptParts(messages)) {
    total += typeof part === 'number' ? part : countTextTokens(part);
  }
  return total;
}

/**
 * Prompt tokens of a whole chat request, an upper bound for its hold: the messages (framing
 * included) plus the JSON text of every other field the model reads (`tools`, `tool_choice`,
 * `response_format`, `functions`, ...), which a node renders into its prompt and bills as
 * input. Yields the event loop between slices.
 */
export async function estimateChatRequestTokens(
  messages: readonly ChatMessageLike[],
  modelReadFields: Readonly<Record<string, unknown>>,
): Promise<number> {
  const counter = new YieldingTokenCounter();
  for (const part of chatPromptParts(messages)) {
    if (typeof part === 'number') counter.addFixed(part);
    else await counter.add(part);
  }
  for (const [name, value] of Object.entries(modelReadFields)) {
    if (value !== undefined) await counter.add(`${name}: ${JSON.stringify(value)}`);
  }
  return counter.total;
}

/** The text split at token boundaries: joined back, the pieces give the text exactly. */
export function splitIntoTokens(text: string): string[] {
  const pieces: string[] = [];
  let pending: number[] = [];
  const { decode, encode } = encoding();
  for (const token of encode(text, AS_PLAIN_TEXT)) {
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
