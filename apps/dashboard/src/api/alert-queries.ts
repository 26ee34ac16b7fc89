import { useQuery } from '@tanstack/react-query';
import { DASHBOARD_OWNER_ROUTES as R } from '@gateway/contracts/dashboard-owner-routes';
import { ApiError, callRoute } from './client';
import type { AlertSettingsPutRequest, AlertSettingsView } from './contract';
import { useChange } from './queries';

/*
 * Account alerts (contract: DASHBOARD_OWNER_ROUTES): the session's account's settings, `null`
 * until they are set.
 */

const alertsKey = ['alerts'] as const;

export const useAlertSettings = () =>
  useQuery({
    queryKey: alertsKey,
    queryFn: async (): Promise<AlertSettingsView | null> => {
      try {
        return await callRoute(R.alerts, {});
      } catch (error) {
        // No settings yet: a 404, shown as an empty form rather than an error.
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
  });

export const useSaveAlertSettings = () =>
  useChange(
    (body: AlertSettingsPutRequest) => callRoute(R.putAlerts, { body }),
    () => [alertsKey],
  );

export const useRemoveAlertSettings = () =>
  useChange(
    () => callRoute(R.removeAlerts, {}),
    () => [alertsKey],
  );
