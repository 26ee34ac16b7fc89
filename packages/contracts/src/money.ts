/**
 * Money (decisions §2): every amount is an integer number of micro-dinar (µDZD) held as `bigint`,
 * never a float. DZD numbers exist only at the JSON edges (request fields such as
 * `spending_limit`, response fields such as `cost_dzd`) and are converted exactly here.
 */

export const MICRO_DZD_PER_DZD = 1_000_000n;

/** Decimal places a DZD amount may carry: one µDZD is 0.000001 DZD. */
export const DZD_DECIMALS = 6;

/**
 * Largest amount whose JSON-number rendering is exact: 10^15 µDZD (1e9 DZD) has 15 significant
 * digits, and every decimal with at most 15 significant digits survives a trip through a double.
 */
export const MAX_EXACT_JSON_MICRO_DZD = 10n ** 15n - 1n;

/** Priority tier surcharge (+20%) as an exact ratio. */
const PRIORITY_NUMERATOR = 12n;
const PRIORITY_DENOMINATOR = 10n;

/** Price unit: prices are µDZD per million tokens. */
const TOKENS_PER_PRICE_UNIT = 1_000_000n;

// Bounds checked before any BigInt arithmetic, so "1e999999999" cannot stall the process. Every
// finite double's shortest text ("5e-324", "1.7976931348623157e+308") fits within them.
const MAX_DECIMAL_TEXT_LENGTH = 64;
const MAX_DECIMAL_EXPONENT = 400;
const DECIMAL_PATTERN = /^(-)?(\d+)?(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

export interface DzdParseOptions {
  /** Negative amounts are refused unless allowed (e.g. a ledger correction). */
  allowNegative?: boolean;
}

/**
 * Converts a DZD amount (JSON number or decimal string) to µDZD exactly. Numbers are read through
 * their shortest round-trip text (`String(0.1)` is "0.1"), i.e. the value the client wrote.
 * Throws RangeError for NaN, ±Infinity, malformed text, more than 6 significant decimals, and
 * negatives (unless allowed). Trailing zeros are fine: "1.5000000" is exactly 1.5 DZD.
 */
export function dzdToMicroDzd(value: number | string, options: DzdParseOptions = {}): bigint {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new RangeError('DZD amount must be a finite number');
  }
  const text = typeof value === 'number' ? String(value) : value;
  const match = text.length <= MAX_DECIMAL_TEXT_LENGTH ? DECIMAL_PATTERN.exec(text) : null;
  const [, sign, intDigits = '', fracDigits = '', exponentText = '0'] = match ?? [];
  if (!match || intDigits.length + fracDigits.length === 0) {
    throw new RangeError('DZD amount is not a decimal number');
  }
  const exponent = Number(exponentText);
  if (Math.abs(exponent) > MAX_DECIMAL_EXPONENT) throw new RangeError('DZD amount is out of range');
  // value = digits × 10^(exponent − fracDigits.length); scale it to µDZD.
  const digits = BigInt(intDigits + fracDigits);
  const shift = exponent - fracDigits.length + DZD_DECIMALS;
  let magnitude: bigint;
  if (shift >= 0) {
    magnitude = digits * 10n ** BigInt(shift);
  } else {
    const divisor = 10n ** BigInt(-shift);
    if (digits % divisor !== 0n) {
      throw new RangeError(`DZD amount must have at most ${DZD_DECIMALS} decimal places`);
    }
    magnitude = digits / divisor;
  }
  if (sign === '-' && magnitude !== 0n) {
    if (!options.allowNegative) throw new RangeError('DZD amount must not be negative');
    return -magnitude;
  }
  return magnitude;
}

/** Exact decimal text of a µDZD amount in DZD, without trailing zeros: 12_500_000n → "12.5". */
export function microDzdToDecimalString(amountMicroDzd: bigint): string {
  const negative = amountMicroDzd < 0n;
  const magnitude = negative ? -amountMicroDzd : amountMicroDzd;
  const whole = magnitude / MICRO_DZD_PER_DZD;
  const fraction = (magnitude % MICRO_DZD_PER_DZD)
    .toString()
    .padStart(DZD_DECIMALS, '0')
    .replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * µDZD → DZD as a JSON number (`cost_dzd: 0.0042`). Parsing the exact decimal text yields the
 * double nearest to it, which JSON.stringify prints back as that same text for amounts up to
 * MAX_EXACT_JSON_MICRO_DZD.
 */
export function microDzdToDzd(amountMicroDzd: bigint): number {
  return Number(microDzdToDecimalString(amountMicroDzd));
}

/** For messages: "12.5 DZD", "0.0042 DZD". Exact for any amount. */
export function formatDzd(amountMicroDzd: bigint): string {
  return `${microDzdToDecimalString(amountMicroDzd)} DZD`;
}

export interface CostInput {
  inputTokens: number | bigint;
  /** Includes reasoning tokens: they are billed at the output rate. */
  outputTokens: number | bigint;
  inputPriceMicroDzdPerM: number | bigint;
  outputPriceMicroDzdPerM: number | bigint;
  /** `service_tier: "priority"` adds 20%. */
  priority: boolean;
}

function nonNegativeInteger(name: string, value: number | bigint): bigint {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new RangeError(`${name} must be a safe integer`);
  }
  const result = BigInt(value);
  if (result < 0n) throw new RangeError(`${name} must not be negative`);
  return result;
}

/**
 * Cost in µDZD = ceil((in × inPrice + out × outPrice) × tier / 10^6), tier = 1 or 12/10.
 * Rounding up once, at the end, means a request never costs less than its exact price and the
 * rounding error is below one µDZD.
 */
export function costMicroDzd(input: CostInput): bigint {
  const weighted =
    nonNegativeInteger('inputTokens', input.inputTokens) *
      nonNegativeInteger('inputPriceMicroDzdPerM', input.inputPriceMicroDzdPerM) +
    nonNegativeInteger('outputTokens', input.outputTokens) *
      nonNegativeInteger('outputPriceMicroDzdPerM', input.outputPriceMicroDzdPerM);
  const numerator = input.priority ? weighted * PRIORITY_NUMERATOR : weighted;
  const denominator = input.priority
    ? TOKENS_PER_PRICE_UNIT * PRIORITY_DENOMINATOR
    : TOKENS_PER_PRICE_UNIT;
  return (numerator + denominator - 1n) / denominator;
}

/** µDZD as carried in JSON messages (JSON has no bigint): a string of digits. */
export function microDzdToWire(amountMicroDzd: bigint): string {
  return amountMicroDzd.toString();
}

/** Inverse of microDzdToWire; accepts only an optional minus sign and digits. */
export function microDzdFromWire(text: string): bigint {
  if (!/^-?\d{1,19}$/.test(text)) throw new RangeError('µDZD wire amount must be integer digits');
  return BigInt(text);
}
