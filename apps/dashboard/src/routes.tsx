import { lazy, Suspense, type ReactNode } from 'react';
import { createBrowserRouter, Navigate, useLocation } from 'react-router';
import { homePath, isOperator, useSession } from './api/session';
import type { DashboardSession } from './api/contract';
import { Loading, QueryState } from './components/QueryState';
import { AppLayout } from './layout/AppLayout';
import { ApiKeysPage } from './pages/ApiKeysPage';
import { InvitationPage } from './pages/InvitationPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { OverviewPage } from './pages/OverviewPage';
import { SignInPage } from './pages/SignInPage';

// Operators' pages load only for operators: owners never download them.
const AccountsPage = lazy(() =>
  import('./pages/AccountsPage').then((module) => ({ default: module.AccountsPage })),
);
const AccountDetailPage = lazy(() =>
  import('./pages/AccountDetailPage').then((module) => ({ default: module.AccountDetailPage })),
);
const CatalogPage = lazy(() =>
  import('./pages/CatalogPage').then((module) => ({ default: module.CatalogPage })),
);
const LedgerPage = lazy(() =>
  import('./pages/LedgerPage').then((module) => ({ default: module.LedgerPage })),
);
const FinancePage = lazy(() =>
  import('./pages/FinancePage').then((module) => ({ default: module.FinancePage })),
);
const OperatorUsagePage = lazy(() =>
  import('./pages/OperatorUsagePage').then((module) => ({ default: module.OperatorUsagePage })),
);
// Owners' heavier pages (tables, the chart) load when first opened.
const ScopedTokensPage = lazy(() =>
  import('./pages/ScopedTokensPage').then((module) => ({ default: module.ScopedTokensPage })),
);
const WebhooksPage = lazy(() =>
  import('./pages/WebhooksPage').then((module) => ({ default: module.WebhooksPage })),
);
const UsagePage = lazy(() =>
  import('./pages/UsagePage').then((module) => ({ default: module.UsagePage })),
);
const ReceiptPage = lazy(() =>
  import('./pages/ReceiptPage').then((module) => ({ default: module.ReceiptPage })),
);
const StatementPage = lazy(() =>
  import('./pages/StatementPage').then((module) => ({ default: module.StatementPage })),
);

/** A lazily loaded page with the loader while its chunk arrives. */
const later = (page: ReactNode) => <Suspense fallback={<Loading />}>{page}</Suspense>;

type Audience = 'owner' | 'operator';

/** The signed-in area: no session → sign-in; the other audience's pages → its own home. */
function Signed({ audience }: { audience: Audience }) {
  const session = useSession();
  const location = useLocation();
  return (
    <QueryState query={session}>
      {(current: DashboardSession | null) => {
        if (current === null) return <Navigate to="/signin" replace state={{ from: location }} />;
        if (isOperator(current) !== (audience === 'operator')) {
          return <Navigate to={homePath(current)} replace />;
        }
        return <AppLayout session={current} />;
      }}
    </QueryState>
  );
}

/** Pages for signed-out visitors: a signed-in one goes home. */
function Unsigned({ children }: { children: ReactNode }) {
  const session = useSession();
  if (session.isPending) return <Loading h="100vh" />;
  if (session.data) return <Navigate to={homePath(session.data)} replace />;
  return <>{children}</>;
}

export const router = createBrowserRouter(
  [
    {
      path: '/signin',
      element: (
        <Unsigned>
          <SignInPage />
        </Unsigned>
      ),
    },
    { path: '/invitation', element: <InvitationPage /> },
    {
      element: <Signed audience="owner" />,
      children: [
        { index: true, element: <OverviewPage /> },
        { path: 'api-keys', element: <ApiKeysPage /> },
        { path: 'scoped-tokens', element: later(<ScopedTokensPage />) },
        { path: 'webhooks', element: later(<WebhooksPage />) },
        { path: 'usage', element: later(<UsagePage />) },
        { path: 'usage/requests/:requestId', element: later(<ReceiptPage />) },
        { path: 'statement', element: later(<StatementPage />) },
      ],
    },
    {
      path: '/operator',
      element: <Signed audience="operator" />,
      children: [
        { index: true, element: <Navigate to="accounts" replace /> },
        { path: 'accounts', element: later(<AccountsPage />) },
        { path: 'accounts/:accountId', element: later(<AccountDetailPage />) },
        { path: 'catalog', element: later(<CatalogPage />) },
        { path: 'ledger', element: later(<LedgerPage />) },
        { path: 'usage', element: later(<OperatorUsagePage />) },
        { path: 'finance', element: later(<FinancePage />) },
      ],
    },
    { path: '*', element: <NotFoundPage /> },
  ],
  { basename: '/dashboard' },
);
