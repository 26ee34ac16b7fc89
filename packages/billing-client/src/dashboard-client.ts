import { pathSegment } from '@gateway/contracts';
import type {
  DashboardInvitationAcceptRequest,
  DashboardOverview,
  DashboardScopedToken,
  DashboardScopedTokenList,
  DashboardSession,
  DashboardSignInRequest,
  DashboardStartedSession,
} from '@gateway/contracts';
import type { InternalRequest } from '@gateway/runtime';

const account = (id: string) => `/dashboard/accounts/${pathSegment(id)}`;

/** Every path of billing's dashboard API, relative to `/internal/v1`. */
export const DASHBOARD_PATHS = {
  signIn: '/dashboard/sessions',
  resolveSession: '/dashboard/sessions/resolve',
  endSession: '/dashboard/sessions/end',
  acceptInvitation: '/dashboard/invitations/accept',
  overview: (accountId: string) => `${account(accountId)}/overview`,
  scopedTokens: (accountId: string) => `${account(accountId)}/scoped-tokens`,
  revokeScopedToken: (accountId: string, tokenId: string) =>
    `${account(accountId)}/scoped-tokens/${pathSegment(tokenId)}/revoke`,
} as const;

/**
 * Billing's dashboard API (`/internal/v1/dashboard`, edge only): sessions, invitation acceptance
 * and the owner's data. Session tokens travel in bodies, never in URLs (URLs end up in logs).
 */
export interface DashboardBillingClient {
  /** Checks the password; the raw session token is answered this once, for edge's cookie. */
  signIn(body: DashboardSignInRequest): Promise<DashboardStartedSession>;
  acceptInvitation(body: DashboardInvitationAcceptRequest): Promise<DashboardStartedSession>;
  /** The cookie's session (401 `session_required` when unknown or expired). */
  resolveSession(token: string): Promise<DashboardSession>;
  endSession(token: string): Promise<void>;
  overview(accountId: string): Promise<DashboardOverview>;
  listScopedTokens(accountId: string, page: URLSearchParams): Promise<DashboardScopedTokenList>;
  /** Revokes by id, within the account only (another account's id: 404); idempotent. */
  revokeScopedToken(accountId: string, tokenId: string): Promise<DashboardScopedToken>;
}

/** `call`: billing's answer or its refusal thrown (the billing client's own). */
export function createDashboardBillingClient(
  call: <T>(request: InternalRequest) => Promise<T>,
): DashboardBillingClient {
  // Reads may be retried; sign-in and the like are not (a retry could start two sessions).
  const get = <T>(path: string) => call<T>({ method: 'GET', path, retry: true });
  const post = <T>(path: string, body?: unknown) => call<T>({ method: 'POST', path, body });
  const paths = DASHBOARD_PATHS;
  return {
    signIn: (body) => post(paths.signIn, body),
    acceptInvitation: (body) => post(paths.acceptInvitation, body),
    resolveSession: (token) => post(paths.resolveSession, { token }),
    endSession: async (token) => {
      await post(paths.endSession, { token });
    },
    overview: (accountId) => get(paths.overview(accountId)),
    listScopedTokens: (accountId, page) =>
      get(`${paths.scopedTokens(accountId)}?${page.toString()}`),
    revokeScopedToken: (accountId, tokenId) => post(paths.revokeScopedToken(accountId, tokenId)),
  };
}
