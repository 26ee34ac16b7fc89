import { Button, Group, Stack, Text, TextInput, Title } from '@mantine/core';
import { modals } from '@mantine/modals';
import { notifications } from '@mantine/notifications';
import { useState, type FormEvent } from 'react';
import type { DashboardAccountDetail } from '../api/contract';
import { useRateLimit, useSuspend } from '../api/operator-queries';
import { ErrorAlert } from './QueryState';

const PER_MINUTE = /^[1-9][0-9]{0,5}$/;

/** Suspension and the rate limit of one account (role `operator`). */
export function AccountControls({ account }: { account: DashboardAccountDetail }) {
  const suspend = useSuspend();
  const rateLimit = useRateLimit();
  const [perMinute, setPerMinute] = useState(String(account.rate_limit_per_minute));
  const suspended = account.status === 'suspended';
  const action = suspended ? 'unsuspend' : 'suspend';
  const confirm = () =>
    modals.openConfirmModal({
      title: suspended ? `Lift the suspension of “${account.name}”?` : `Suspend “${account.name}”?`,
      children: (
        <Text size="sm">
          {suspended
            ? 'Its keys and tokens work again from the next request.'
            : 'Its keys and tokens are refused (403) from the next request. The balance is kept.'}
        </Text>
      ),
      labels: { confirm: suspended ? 'Unsuspend' : 'Suspend', cancel: 'Cancel' },
      confirmProps: { color: suspended ? 'teal' : 'red' },
      onConfirm: () => suspend.mutate({ id: account.id, action }),
    });
  const valid = PER_MINUTE.test(perMinute) && Number(perMinute) <= 100_000;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!valid) return;
    rateLimit.mutate(
      { id: account.id, perMinute: Number(perMinute) },
      { onSuccess: () => notifications.show({ color: 'teal', message: 'Rate limit saved.' }) },
    );
  };
  return (
    <Stack gap="sm">
      <Title order={4}>Access</Title>
      <Group>
        <Button
          color={suspended ? 'teal' : 'red'}
          variant="light"
          onClick={confirm}
          loading={suspend.isPending}
        >
          {suspended ? 'Unsuspend account' : 'Suspend account'}
        </Button>
      </Group>
      <form onSubmit={submit} noValidate>
        <Group align="flex-end" gap="xs">
          <TextInput
            label="Rate limit (requests per minute)"
            inputMode="numeric"
            value={perMinute}
            error={valid ? null : 'From 1 to 100000'}
            onChange={(event) => setPerMinute(event.currentTarget.value.trim())}
          />
          <Button type="submit" variant="default" loading={rateLimit.isPending} disabled={!valid}>
            Save
          </Button>
        </Group>
      </form>
      <ErrorAlert error={suspend.error ?? rateLimit.error} />
    </Stack>
  );
}
