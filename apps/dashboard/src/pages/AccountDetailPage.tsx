import {
  Anchor,
  Badge,
  Button,
  Group,
  Paper,
  SimpleGrid,
  Stack,
  Tabs,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import type { DashboardAccountDetail, InvitationCreated } from '../api/contract';
import { useAccountDeliveries } from '../api/operator-queries';
import { useAccount, useCredit, useInvite } from '../api/queries';
import { canEdit, useSession } from '../api/session';
import { AccountBudgets } from '../components/AccountBudgets';
import { AccountControls } from '../components/AccountControls';
import { AccountRateLimits } from '../components/AccountRateLimits';
import { AccountScopedTokens } from '../components/AccountScopedTokens';
import { DeliveriesTable } from '../components/DeliveriesTable';
import { OpenHoldsTable } from '../components/OpenHoldsTable';
import { PageTitle } from '../components/PageTitle';
import { ErrorAlert, QueryState } from '../components/QueryState';
import { SecretOnce } from '../components/SecretOnce';
import { StatCard } from '../components/StatCard';
import { StatementView } from '../components/StatementView';
import { formatDateTime, formatDzd } from '../format';

/** 128 random bits in hex (crypto.randomUUID exists only in secure contexts). */
function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

// Up to 6 decimals, like the API: the amount is sent as typed, never through a float.
const AMOUNT_PATTERN = /^[0-9]{1,10}(\.[0-9]{1,6})?$/;

function CreditForm({ accountId }: { accountId: string }) {
  const [amount, setAmount] = useState('');
  const [reference, setReference] = useState('');
  // One key per filled-in form: double clicks and retries of this credit are applied once.
  const [idempotencyKey, setIdempotencyKey] = useState(newIdempotencyKey);
  const credit = useCredit();
  const valid = AMOUNT_PATTERN.test(amount) && Number(amount) > 0 && reference.trim() !== '';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!valid) return;
    credit.mutate(
      { accountId, amount_dzd: amount, reference: reference.trim(), idempotencyKey },
      {
        onSuccess: (result) => {
          notifications.show({
            color: 'teal',
            message: `Credited. Balance ${formatDzd(result.balance_dzd)}.`,
          });
          setAmount('');
          setReference('');
          setIdempotencyKey(newIdempotencyKey());
        },
      },
    );
  };
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <Title order={4}>Credit</Title>
        <TextInput
          label="Amount (DZD)"
          inputMode="decimal"
          placeholder="1000.00"
          value={amount}
          error={
            amount !== '' && !AMOUNT_PATTERN.test(amount) ? 'Up to 6 decimals, like 1500.25' : null
          }
          onChange={(event) => setAmount(event.currentTarget.value.trim())}
        />
        <TextInput
          label="Reference"
          description="The payment's reference, shown on the statement."
          maxLength={500}
          value={reference}
          onChange={(event) => setReference(event.currentTarget.value)}
        />
        <ErrorAlert error={credit.error} />
        <Button type="submit" loading={credit.isPending} disabled={!valid}>
          Credit account
        </Button>
      </Stack>
    </form>
  );
}

function InviteForm({ accountId }: { accountId: string }) {
  const [email, setEmail] = useState('');
  const [created, setCreated] = useState<InvitationCreated | null>(null);
  const invite = useInvite();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate({ accountId, email: email.trim() }, { onSuccess: setCreated });
  };
  return (
    <Stack gap="sm">
      <Title order={4}>Invite an owner</Title>
      {created === null ? (
        <form onSubmit={submit} noValidate>
          <Stack gap="sm">
            <TextInput
              label="Owner's email"
              type="email"
              value={email}
              onChange={(event) => setEmail(event.currentTarget.value)}
            />
            <ErrorAlert error={invite.error} />
            <Button
              type="submit"
              variant="light"
              loading={invite.isPending}
              disabled={!email.includes('@')}
            >
              Create invitation link
            </Button>
          </Stack>
        </form>
      ) : (
        <>
          <Text size="sm">
            For {created.email}, valid until {formatDateTime(created.expires_at)}.
          </Text>
          <SecretOnce label="invitation link" value={created.url} onDone={() => setCreated(null)} />
        </>
      )}
    </Stack>
  );
}

function Balances({ account }: { account: DashboardAccountDetail }) {
  const items = [
    ['Balance', account.balance_dzd],
    ['Reserved', account.reserved_dzd],
    ['Available', account.available_dzd],
  ] as const;
  return (
    <SimpleGrid cols={{ base: 1, xs: 3 }}>
      {items.map(([label, amount]) => (
        <StatCard key={label} label={label} amount={amount} />
      ))}
    </SimpleGrid>
  );
}

/** The account's statement, open holds and webhook deliveries, one tab each. */
function AccountRecords({ accountId }: { accountId: string }) {
  const deliveries = useAccountDeliveries(accountId);
  return (
    <Paper withBorder p="md" radius="md">
      <Tabs defaultValue="statement" keepMounted={false}>
        <Tabs.List mb="md">
          <Tabs.Tab value="statement">Statement</Tabs.Tab>
          <Tabs.Tab value="holds">Open holds</Tabs.Tab>
          <Tabs.Tab value="deliveries">Webhook deliveries</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="statement">
          <StatementView account={accountId} />
        </Tabs.Panel>
        <Tabs.Panel value="holds">
          <OpenHoldsTable accountId={accountId} />
        </Tabs.Panel>
        <Tabs.Panel value="deliveries">
          <DeliveriesTable deliveries={deliveries} canRedeliver={false} />
        </Tabs.Panel>
      </Tabs>
    </Paper>
  );
}

export function AccountDetailPage() {
  const { accountId = '' } = useParams();
  const account = useAccount(accountId);
  const canWrite = canEdit(useSession().data);
  return (
    <>
      <Anchor component={Link} to="/operator/accounts" size="sm">
        ← Accounts
      </Anchor>
      <QueryState query={account}>
        {(detail) => (
          <Stack gap="md" mt="sm">
            <PageTitle
              mb={0}
              title={detail.name}
              description={`${detail.id} · created ${formatDateTime(detail.created_at)}`}
              action={
                <Group gap="xs">
                  <Badge color={detail.status === 'active' ? 'teal' : 'red'}>{detail.status}</Badge>
                  <Badge variant="light">{detail.rate_limit_per_minute} req / min</Badge>
                </Group>
              }
            />
            <Balances account={detail} />
            {canWrite ? (
              <SimpleGrid cols={{ base: 1, md: 3 }}>
                <Paper withBorder p="md" radius="md">
                  <CreditForm accountId={detail.id} />
                </Paper>
                <Paper withBorder p="md" radius="md">
                  <InviteForm accountId={detail.id} />
                </Paper>
                <Paper withBorder p="md" radius="md">
                  <AccountControls key={detail.rate_limit_per_minute} account={detail} />
                </Paper>
              </SimpleGrid>
            ) : (
              <Text size="sm" c="dimmed">
                Your role reads only.
              </Text>
            )}
            <AccountBudgets accountId={detail.id} canWrite={canWrite} />
            <AccountRateLimits accountId={detail.id} canWrite={canWrite} />
            <AccountScopedTokens accountId={detail.id} />
            <AccountRecords accountId={detail.id} />
          </Stack>
        )}
      </QueryState>
      {account.error !== null && account.data !== undefined && <ErrorAlert error={account.error} />}
    </>
  );
}
