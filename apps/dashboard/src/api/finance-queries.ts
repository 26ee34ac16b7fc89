import { useQuery } from '@tanstack/react-query';
import { DASHBOARD_FINANCE_ROUTES as R } from '@gateway/contracts/dashboard-operator-routes';
import { callRoute, routeHref } from './client';
import { useChange } from './queries';

/** A month (YYYY-MM) as the report's inclusive dates. */
export function monthRange(month: string): { from: string; to: string } {
  const [year, monthIndex] = month.split('-').map(Number) as [number, number];
  const lastDay = new Date(Date.UTC(year, monthIndex, 0)).getUTCDate();
  return { from: `${month}-01`, to: `${month}-${String(lastDay).padStart(2, '0')}` };
}

const keys = {
  report: (month: string) => ['finance', 'report', month] as const,
  periods: ['finance', 'periods'] as const,
};

const reportQuery = (month: string) => new URLSearchParams({ ...monthRange(month), limit: '200' });

export const usePeriodReport = (month: string) =>
  useQuery({
    queryKey: keys.report(month),
    queryFn: () => callRoute(R.report, { query: reportQuery(month) }),
  });

export const useClosedPeriods = () =>
  useQuery({
    queryKey: keys.periods,
    queryFn: () => callRoute(R.periods, {}),
  });

export const useClosePeriod = () =>
  useChange(
    (month: string) => callRoute(R.closePeriod, { params: { period: month } }),
    () => [keys.periods],
  );

/** A download link for one table of the report (a link cannot set `Accept`). */
export function reportCsvHref(month: string, section: string): string {
  const query = reportQuery(month);
  query.set('format', 'csv');
  query.set('section', section);
  return routeHref(R.report, { query });
}
