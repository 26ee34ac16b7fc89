/*
 * Months as finance's books count them: a month begins at 00:00 on its first day in the
 * business's zone (billing's `REPORT_TIME_ZONE`), not in UTC. Pure, without dependencies, so the
 * dashboard uses the same rule in the browser.
 */

/** The calendar month (`YYYY-MM`) that `now` falls in, in `timeZone`. */
export function monthIn(timeZone: string, now: Date): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
  }).formatToParts(now);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}`;
}

/** The month before the one `now` falls in, in `timeZone`: the month finance closes next. */
export function previousMonthIn(timeZone: string, now: Date): string {
  const [year, month] = monthIn(timeZone, now).split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, month - 2, 1)).toISOString().slice(0, 7);
}
