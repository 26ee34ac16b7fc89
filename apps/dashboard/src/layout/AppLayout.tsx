import { AppShell, Burger, Button, Group, NavLink, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { NavLink as RouterLink, Outlet, useNavigate } from 'react-router';
import { isOperator, useSignOut } from '../api/session';
import type { DashboardSession } from '../api/contract';

const OWNER_LINKS = [
  { to: '/', label: 'Overview' },
  { to: '/api-keys', label: 'API keys' },
  { to: '/scoped-tokens', label: 'Scoped tokens' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/usage', label: 'Usage' },
  { to: '/statement', label: 'Statement' },
];
const OPERATOR_LINKS = [
  { to: '/operator/accounts', label: 'Accounts' },
  { to: '/operator/catalog', label: 'Catalog' },
  { to: '/operator/ledger', label: 'Ledger' },
  { to: '/operator/usage', label: 'Usage' },
  { to: '/operator/finance', label: 'Finance' },
];

/** Header, navigation (a drawer behind a burger on phones) and the page. */
export function AppLayout({ session }: { session: DashboardSession }) {
  const [opened, { toggle, close }] = useDisclosure();
  const signOut = useSignOut();
  const navigate = useNavigate();
  const links = isOperator(session) ? OPERATOR_LINKS : OWNER_LINKS;
  const context = session.account?.name ?? `Operators · ${session.user.role}`;
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 232, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Menu" />
            <Text fw={700}>Inference Gateway</Text>
          </Group>
          <Text size="sm" c="dimmed" truncate="end" data-testid="context-name">
            {context}
          </Text>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="sm">
        <AppShell.Section grow>
          {links.map((link) => (
            <NavLink
              key={link.to}
              component={RouterLink}
              to={link.to}
              end
              label={link.label}
              onClick={close}
            />
          ))}
        </AppShell.Section>
        <AppShell.Section>
          <Stack gap={6}>
            <Text size="xs" c="dimmed" truncate="end">
              {session.user.email}
            </Text>
            <Button
              variant="default"
              size="xs"
              loading={signOut.isPending}
              onClick={() =>
                signOut.mutate(undefined, { onSettled: () => void navigate('/signin') })
              }
            >
              Sign out
            </Button>
          </Stack>
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}
