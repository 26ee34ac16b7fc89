import { BILLING_DASHBOARD_PREFIX, BILLING_DASHBOARD_ROUTES as R } from '@gateway/contracts';
import type {
  DashboardInvitationAcceptRequest,
  DashboardOverview,
  DashboardScopedToken,
  DashboardScopedTokenList,
  DashboardSession,
  DashboardSignInRequest,
  DashboardStartedSession,
} from '@gateway/contracts';
import type { InternalHttp } from '@gateway/runtime';
import { routeSender } from './route-sender.js';

/**
 * Billing's dashboard API (`BILLING_DASHBOARD_ROUTES`, edge only): sessions, invitation
 * acceptance and the owner's data. Session tokens travel in bodies, never in URLs (URLs end up
 * in logs).
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

/** Every answer is the route's, every refusal billing's, thrown. */
export function createDashboardBillingClient(http: InternalHttp): DashboardBillingClient {
  const { call, done } = routeSender(http, {
    prefix: BILLING_DASHBOARD_PREFIX,
    // Reads may be retried; sign-in and the like are not (a retry could start two sessions).
    retries: (route) => route.method === 'GET',
    // A 401 here is the session's (`session_required`), not edge's credential: passed on as is.
  });
  const account = (id: string) => ({ params: { id } });
  return {
    signIn: (body) => call(R.signIn, { body }),
    acceptInvitation: (body) => call(R.acceptInvitation, { body }),
    resolveSession: (token) => call(R.resolveSession, { body: { token } }),
    endSession: (token) => done(R.endSession, { body: { token } }),
    overview: (accountId) => call(R.overview, account(accountId)),
    listScopedTokens: (accountId, page) =>
      call(R.scopedTokens, { ...account(accountId), query: page }),
    revokeScopedToken: (accountId, tokenId) =>
      call(R.revokeScopedToken, { params: { id: accountId, tokenId } }),
  };
}
