import { useQuery } from '@tanstack/react-query';
import { ApiError, api } from './client';
import type { AlertSettingsPutRequest, AlertSettingsView } from './contract';
import { useChange } from './queries';

/* Account alerts: the session's account's settings, `null` until they are set. */

const alertsKey = ['alerts'] as const;

export const useAlertSettings = () =>
  useQuery({
    queryKey: alertsKey,
    queryFn: async (): Promise<AlertSettingsView | null> => {
      try {
        return await api<AlertSettingsView>('GET', '/alerts');
      } catch (error) {
        // No settings yet: a 404, shown as an empty form rather than an error.
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
  });

export const useSaveAlertSettings = () =>
  useChange(
    (body: AlertSettingsPutRequest) => api<AlertSettingsView>('PUT', '/alerts', body),
    () => [alertsKey],
  );

export const useRemoveAlertSettings = () =>
  useChange(
    () => api<void>('DELETE', '/alerts'),
    () => [alertsKey],
  );
