import { DZD_DECIMALS, MICRO_DZD_PER_DZD } from '@gateway/contracts';

/** µDZD → DZD text with exactly 6 decimals, for CSV: 12_500_000n → "12.500000", -42n → "-0.000042". */
export function microDzdToFixedDzd(amountMicroDzd: bigint): string {
  const negative = amountMicroDzd < 0n;
  const magnitude = negative ? -amountMicroDzd : amountMicroDzd;
  const whole = magnitude / MICRO_DZD_PER_DZD;
  const fraction = (magnitude % MICRO_DZD_PER_DZD).toString().padStart(DZD_DECIMALS, '0');
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}
