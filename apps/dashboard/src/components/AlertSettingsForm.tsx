import { Button, Group, Paper, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState, type FormEvent } from 'react';
import {
  useAlertSettings,
  useRemoveAlertSettings,
  useSaveAlertSettings,
} from '../api/alert-queries';
import type { AlertSettingsPutRequest, AlertSettingsView } from '../api/contract';
import { ErrorAlert, QueryState } from './QueryState';

// Up to 6 decimals, like the API: the threshold is sent as typed, never through a float.
const AMOUNT_PATTERN = /^[0-9]{1,10}(\.[0-9]{1,6})?$/;
const SHARES_PATTERN = /^\s*(\d{1,3}\s*(,\s*\d{1,3}\s*){0,9})?$/;
const HOURS_PATTERN = /^[0-9]{1,3}$/;

const shares = (text: string): number[] =>
  text.trim() === '' ? [] : text.split(',').map((part) => Number(part.trim()));

function sharesValid(text: string): boolean {
  if (!SHARES_PATTERN.test(text)) return false;
  const values = shares(text);
  return values.every((v) => v >= 1 && v <= 100) && new Set(values).size === values.length;
}

const exactDzd = (micro: string | null): string => {
  if (micro === null) return '';
  const value = BigInt(micro);
  const fraction = String(value % 1_000_000n)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return fraction === '' ? String(value / 1_000_000n) : `${value / 1_000_000n}.${fraction}`;
};

function Form({ current }: { current: AlertSettingsView | null }) {
  const save = useSaveAlertSettings();
  const remove = useRemoveAlertSettings();
  const [url, setUrl] = useState(current?.url ?? '');
  const [enabled, setEnabled] = useState(current?.enabled ?? true);
  const [below, setBelow] = useState(exactDzd(current?.balance_below_micro_dzd ?? null));
  const [thresholds, setThresholds] = useState(
    (current?.budget_thresholds_percent ?? [50, 80, 100]).join(', '),
  );
  const [hours, setHours] = useState(current?.exhaustion_hours?.toString() ?? '');
  const urlValid = /^https?:\/\/\S+$/.test(url) && url.length <= 2048;
  const belowValid = below === '' || (AMOUNT_PATTERN.test(below) && /[1-9]/.test(below));
  const hoursValid = hours === '' || (HOURS_PATTERN.test(hours) && +hours >= 1 && +hours <= 720);
  const valid = urlValid && belowValid && sharesValid(thresholds) && hoursValid;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!valid) return;
    const body: AlertSettingsPutRequest = {
      url,
      enabled,
      balance_below_dzd: below === '' ? null : below,
      budget_thresholds_percent: shares(thresholds),
      exhaustion_hours: hours === '' ? null : Number(hours),
    };
    save.mutate(body, {
      onSuccess: () => notifications.show({ color: 'teal', message: 'Alerts saved.' }),
    });
  };
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          label="Endpoint URL"
          description="Alerts are POSTed here, signed like job webhooks (stored encrypted)."
          placeholder="https://example.com/hooks/alerts"
          value={url}
          error={url !== '' && !urlValid ? 'An https:// URL' : null}
          onChange={(event) => setUrl(event.currentTarget.value.trim())}
        />
        <TextInput
          label="Balance below (DZD)"
          description="Alert when the available balance falls below; empty: no balance alert."
          inputMode="decimal"
          value={below}
          error={!belowValid ? 'More than 0, up to 6 decimals' : null}
          onChange={(event) => setBelow(event.currentTarget.value.trim())}
        />
        <TextInput
          label="Budget thresholds (%)"
          description="Each key's and token's budget, once per window at each share; empty: none."
          value={thresholds}
          error={!sharesValid(thresholds) ? 'Up to 10 different numbers from 1 to 100' : null}
          onChange={(event) => setThresholds(event.currentTarget.value)}
        />
        <TextInput
          label="Projected exhaustion (hours)"
          description="Alert when the balance would last fewer hours at the last hour's spend."
          inputMode="numeric"
          value={hours}
          error={!hoursValid ? 'From 1 to 720' : null}
          onChange={(event) => setHours(event.currentTarget.value.trim())}
        />
        <Switch
          label="Send alerts"
          checked={enabled}
          onChange={(event) => setEnabled(event.currentTarget.checked)}
        />
        <ErrorAlert error={save.error ?? remove.error} />
        <Group>
          <Button type="submit" loading={save.isPending} disabled={!valid}>
            Save alerts
          </Button>
          {current !== null && (
            <Button
              variant="light"
              color="red"
              loading={remove.isPending}
              onClick={() => remove.mutate(undefined)}
            >
              Remove
            </Button>
          )}
        </Group>
      </Stack>
    </form>
  );
}

/** The Webhooks page's alert section: the account's alert settings, one form. */
export function AlertSettingsSection() {
  const settings = useAlertSettings();
  return (
    <Paper withBorder radius="md" p="md">
      <Title order={4}>Account alerts</Title>
      <Text size="sm" c="dimmed" mb="sm">
        Low balance, budget thresholds and projected exhaustion, each sent once per window.
      </Text>
      <QueryState query={settings}>
        {(current) => <Form key={current?.updated_at ?? 'new'} current={current} />}
      </QueryState>
    </Paper>
  );
}
