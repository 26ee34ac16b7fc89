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
export const SLICE_CHARS = 16_384;

export type TextSlice = { kind: 'exact'; text: string } | { kind: 'bound'; upperBound: number };

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
export function* textSlices(text: string): Generator<TextSlice> {
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
