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
