import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countTextTokens, estimateTextTokens, MAX_WORD_CHARS } from './index.js';

const plain = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
const reference = (text: string) => countTokens(text, plain);

const pieces = [' ', '  ', '\n', '\n\n', '\t', ',', '.', "'s", '!?', '/', '12345', '(x)', 'é'];
const words = [
  'hello',
  'World',
  'naïve',
  'Straße',
  '中文',
  '，',
  '。',
  'مرحبا',
  '🙂',
  'x_y',
  "don't",
];
/** Text of ordinary words, punctuation and whitespace: no run long enough to be bounded. */
const ordinaryText = fc
  .array(fc.constantFrom(...pieces, ...words, ...words), { maxLength: 400 })
  .map((parts) => parts.join(''));

describe('linear token counting', () => {
  it('is exact on ordinary text, wherever it is cut', () => {
    fc.assert(
      fc.property(ordinaryText, (text) => {
        expect(countTextTokens(text)).toBe(reference(text));
      }),
      { numRuns: 300 },
    );
  });

  it('is never below the tokenizer on any text (runs too long to cut count as bytes)', () => {
    const anyText = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 2_000 }),
      fc
        .tuple(ordinaryText, fc.constantFrom('a', '中', ' ', '!', 'ab'), fc.nat({ max: 3_000 }))
        .map(([text, unit, count]) => text + unit.repeat(count) + text),
    );
    fc.assert(
      fc.property(anyText, (text) => {
        expect(countTextTokens(text)).toBeGreaterThanOrEqual(reference(text));
      }),
      { numRuns: 200 },
    );
  });

  it('bounds a run it cannot cut by its UTF-8 bytes instead of tokenizing it', () => {
    // 200,000 × "a" took 46 s to tokenize (one BPE piece): now it is a byte count.
    expect(countTextTokens('a'.repeat(200_000))).toBe(200_000);
    expect(countTextTokens('中'.repeat(MAX_WORD_CHARS + 1))).toBe(3 * (MAX_WORD_CHARS + 1));
    expect(countTextTokens('a'.repeat(MAX_WORD_CHARS))).toBe(reference('a'.repeat(MAX_WORD_CHARS)));
  });

  it('counts text that spells a special token as text instead of throwing', () => {
    expect(countTextTokens('say <|endoftext|> now')).toBe(reference('say <|endoftext|> now'));
  });

  it('gives the event loop back while counting a large text', async () => {
    const text = Array.from({ length: 150_000 }, (_, i) => `w${(i * 7919) % 100_003}`).join(' ');
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    const total = await estimateTextTokens([text]);
    clearInterval(timer);
    expect(total).toBe(countTextTokens(text));
    expect(ticks).toBeGreaterThan(0);
  });
});
