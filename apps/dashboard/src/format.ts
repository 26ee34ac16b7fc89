// Amounts are exact to the micro-dinar (the API's 6 decimals): shown with at least the
// currency's 2 decimals and never rounded away. Dates are shown in the viewer's own zone.
const dzd = new Intl.NumberFormat(undefined, {
  style: 'currency',
  currency: 'DZD',
  currencyDisplay: 'code',
  minimumFractionDigits: 2,
  maximumFractionDigits: 6,
});

export const formatDzd = (amount: number): string => dzd.format(amount);

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export const formatDateTime = (iso: string): string => dateTime.format(new Date(iso));

const day = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

/** A UTC calendar day (`2026-11-24`) as a short label. */
export const formatDay = (isoDay: string): string => day.format(new Date(`${isoDay}T12:00:00Z`));

/**
 * µDZD as the API's decimal string (ledger, statements) → DZD, exactly: BigInt arithmetic and
 * Intl's decimal-string input, never a float.
 */
export function formatMicroDzd(micro: string): string {
  const value = BigInt(micro);
  const sign = value < 0n ? '-' : '';
  const abs = value < 0n ? -value : value;
  const decimal = `${sign}${abs / 1_000_000n}.${String(abs % 1_000_000n).padStart(6, '0')}`;
  // ES2023: a numeric string is formatted exactly (the types still say number).
  return dzd.format(decimal as unknown as number);
}

const integer = new Intl.NumberFormat();

export const formatCount = (value: number): string => integer.format(value);

/** A duration in ms, or a dash when not reported. */
export const formatMs = (ms: number | null): string =>
  ms === null ? '—' : ms < 1000 ? `${integer.format(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;

/** `YYYY-MM-DD` of a date in the viewer's zone (what a date input shows and returns). */
export function localDay(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** The viewer's local midnight of a `YYYY-MM-DD` day, as RFC 3339 with the zone (UTC). */
export const startOfLocalDay = (day: string): string => new Date(`${day}T00:00:00`).toISOString();
