import { describe, expect, it } from '@jest/globals';
import {
  MAX_EXACT_JSON_MICRO_DZD,
  costMicroDzd,
  dzdToMicroDzd,
  formatDzd,
  microDzdFromWire,
  microDzdToDecimalString,
  microDzdToDzd,
  microDzdToWire,
} from './money.js';

/** Seeded PRNG (mulberry32): property tests are reproducible. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Uniform-ish bigint in [0, max]: digit count first, so small and large values both appear. */
function randomBigInt(random: () => number, max: bigint): bigint {
  const maxDigits = max.toString().length;
  const digits = 1 + Math.floor(random() * maxDigits);
  let value = 0n;
  for (let i = 0; i < digits; i += 1) value = value * 10n + BigInt(Math.floor(random() * 10));
  return value > max ? value % (max + 1n) : value;
}

describe('dzdToMicroDzd', () => {
  it.each<[number | string, bigint]>([
    [0, 0n],
    [1, 1_000_000n],
    [0.1, 100_000n],
    [0.000001, 1n],
    [1e-6, 1n],
    [12.5, 12_500_000n],
    [123456.789012, 123_456_789_012n],
    [1e21, 10n ** 27n],
    ['0', 0n],
    ['-0', 0n],
    ['12.5', 12_500_000n],
    ['.5', 500_000n],
    ['5.', 5_000_000n],
    ['1.5000000', 1_500_000n],
    ['1e-6', 1n],
    ['1.5E3', 1_500_000_000n],
    ['25e-6', 25n],
    ['007.25', 7_250_000n],
  ])('%p → %p µDZD', (value, expected) => {
    expect(dzdToMicroDzd(value)).toBe(expected);
  });

  it.each<[number | string, RegExp]>([
    [Number.NaN, /finite/],
    [Number.POSITIVE_INFINITY, /finite/],
    [Number.NEGATIVE_INFINITY, /finite/],
    [1e-7, /6 decimal places/],
    [0.1234567, /6 decimal places/],
    ['1.0000001', /6 decimal places/],
    ['25e-7', /6 decimal places/],
    [-1, /negative/],
    ['-0.000001', /negative/],
    ['', /not a decimal/],
    ['.', /not a decimal/],
    ['-', /not a decimal/],
    [' 1', /not a decimal/],
    ['1 ', /not a decimal/],
    ['1,5', /not a decimal/],
    ['0x10', /not a decimal/],
    ['+1', /not a decimal/],
    ['Infinity', /not a decimal/],
    ['1'.repeat(65), /not a decimal/],
    ['1e999999999', /out of range/],
    ['1e-401', /out of range/],
  ])('rejects %p', (value, message) => {
    expect(() => dzdToMicroDzd(value)).toThrow(RangeError);
    expect(() => dzdToMicroDzd(value)).toThrow(message);
  });

  it('accepts negatives when allowed', () => {
    expect(dzdToMicroDzd(-1, { allowNegative: true })).toBe(-1_000_000n);
    expect(dzdToMicroDzd('-0.000001', { allowNegative: true })).toBe(-1n);
  });

  it('handles the extreme doubles without stalling', () => {
    expect(() => dzdToMicroDzd(Number.MIN_VALUE)).toThrow(/6 decimal places/);
    expect(dzdToMicroDzd(Number.MAX_VALUE) > 10n ** 308n).toBe(true);
  });

  it('parses random decimal strings with up to 6 decimals exactly', () => {
    const random = prng(1);
    for (let i = 0; i < 5000; i += 1) {
      const whole = randomBigInt(random, 10n ** 18n);
      const decimals = Math.floor(random() * 7);
      const fraction =
        decimals === 0
          ? ''
          : randomBigInt(random, 10n ** BigInt(decimals) - 1n)
              .toString()
              .padStart(decimals, '0');
      const text = decimals === 0 ? `${whole}` : `${whole}.${fraction}`;
      const expected = whole * 1_000_000n + BigInt((fraction || '0').padEnd(6, '0'));
      expect(dzdToMicroDzd(text)).toBe(expected);
    }
  });
});

describe('microDzdToDzd / microDzdToDecimalString', () => {
  it.each<[bigint, string]>([
    [0n, '0'],
    [1n, '0.000001'],
    [4200n, '0.0042'],
    [12_500_000n, '12.5'],
    [1_000_000n, '1'],
    [-1_250_000n, '-1.25'],
    [10n ** 24n, '1000000000000000000'],
  ])('%p µDZD → %s', (amount, text) => {
    expect(microDzdToDecimalString(amount)).toBe(text);
  });

  it('renders as the JSON number clients expect', () => {
    expect(microDzdToDzd(4200n)).toBe(0.0042);
    expect(JSON.stringify({ cost_dzd: microDzdToDzd(4200n) })).toBe('{"cost_dzd":0.0042}');
    expect(JSON.stringify(microDzdToDzd(MAX_EXACT_JSON_MICRO_DZD))).toBe('999999999.999999');
  });

  it('round-trips random amounts through JSON exactly', () => {
    const random = prng(2);
    for (let i = 0; i < 10_000; i += 1) {
      const amount = randomBigInt(random, MAX_EXACT_JSON_MICRO_DZD);
      const json = JSON.stringify(microDzdToDzd(amount));
      expect(json).toBe(microDzdToDecimalString(amount));
      expect(dzdToMicroDzd(JSON.parse(json) as number)).toBe(amount);
    }
  });
});

describe('formatDzd', () => {
  it.each<[bigint, string]>([
    [12_500_000n, '12.5 DZD'],
    [0n, '0 DZD'],
    [4200n, '0.0042 DZD'],
    [1n, '0.000001 DZD'],
    [-1_250_000n, '-1.25 DZD'],
    [123_456_789_012_345_678_901n, '123456789012345.678901 DZD'],
  ])('%p → %s', (amount, text) => {
    expect(formatDzd(amount)).toBe(text);
  });
});

describe('costMicroDzd', () => {
  const price = (inputPriceMicroDzdPerM: bigint, outputPriceMicroDzdPerM: bigint) => ({
    inputPriceMicroDzdPerM,
    outputPriceMicroDzdPerM,
  });

  it('computes the documented examples', () => {
    // 1000 in at 1 DZD/M + 500 out at 2 DZD/M = 0.001 + 0.001 DZD.
    expect(
      costMicroDzd({
        inputTokens: 1000,
        outputTokens: 500,
        ...price(1_000_000n, 2_000_000n),
        priority: false,
      }),
    ).toBe(2000n);
    // Priority: +20%, exactly.
    expect(
      costMicroDzd({
        inputTokens: 1000,
        outputTokens: 500,
        ...price(1_000_000n, 2_000_000n),
        priority: true,
      }),
    ).toBe(2400n);
    expect(
      costMicroDzd({ inputTokens: 0, outputTokens: 0, ...price(5n, 5n), priority: true }),
    ).toBe(0n);
  });

  it('rounds up once, at the end', () => {
    // 1 token at 1 µDZD/M is 10^-6 µDZD → 1 µDZD.
    expect(
      costMicroDzd({ inputTokens: 1, outputTokens: 0, ...price(1n, 0n), priority: false }),
    ).toBe(1n);
    // 999_999 + 1 = exactly 1 µDZD, not 2 (no per-part rounding).
    expect(
      costMicroDzd({ inputTokens: 999_999, outputTokens: 1, ...price(1n, 1n), priority: false }),
    ).toBe(1n);
    // 5/10^6 × 1.2 = 6/10^6 → 1; 10^6 × 1.2 = 1.2 → 2.
    expect(
      costMicroDzd({ inputTokens: 5, outputTokens: 0, ...price(1n, 0n), priority: true }),
    ).toBe(1n);
    expect(
      costMicroDzd({ inputTokens: 1_000_000, outputTokens: 0, ...price(1n, 0n), priority: true }),
    ).toBe(2n);
  });

  it('accepts bigint token counts', () => {
    expect(
      costMicroDzd({
        inputTokens: 10n ** 12n,
        outputTokens: 0n,
        ...price(3n, 0n),
        priority: false,
      }),
    ).toBe(3_000_000n);
  });

  it.each([
    { inputTokens: -1 },
    { outputTokens: 1.5 },
    { inputTokens: Number.NaN },
    { inputTokens: 2 ** 53 },
    { inputPriceMicroDzdPerM: -1n },
  ])('rejects %p', (override) => {
    expect(() =>
      costMicroDzd({
        inputTokens: 1,
        outputTokens: 1,
        ...price(1n, 1n),
        priority: false,
        ...override,
      }),
    ).toThrow(RangeError);
  });

  it('matches a ceiling reference on random inputs', () => {
    const random = prng(3);
    for (let i = 0; i < 10_000; i += 1) {
      const input = {
        inputTokens: randomBigInt(random, 2_000_000n),
        outputTokens: randomBigInt(random, 200_000n),
        inputPriceMicroDzdPerM: randomBigInt(random, 10n ** 10n),
        outputPriceMicroDzdPerM: randomBigInt(random, 10n ** 10n),
        priority: random() < 0.5,
      };
      const cost = costMicroDzd(input);
      // Reference: exact rational value p/q; cost is the least integer ≥ p/q.
      const p =
        (input.inputTokens * input.inputPriceMicroDzdPerM +
          input.outputTokens * input.outputPriceMicroDzdPerM) *
        (input.priority ? 6n : 5n);
      const q = 5n * 1_000_000n;
      expect(cost * q >= p).toBe(true);
      expect((cost - 1n) * q < p).toBe(true);
      if (input.priority) {
        expect(cost >= costMicroDzd({ ...input, priority: false })).toBe(true);
      }
    }
  });
});

describe('wire amounts', () => {
  it('round-trips bigint amounts as digit strings', () => {
    for (const amount of [0n, 1n, -5n, 9_223_372_036_854_775_807n]) {
      expect(microDzdFromWire(microDzdToWire(amount))).toBe(amount);
    }
  });

  it.each(['', '1.5', '1e3', ' 1', '+1', '12345678901234567890'])('rejects %p', (text) => {
    expect(() => microDzdFromWire(text)).toThrow(RangeError);
  });
});
