import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { DASHBOARD_SESSION_ROUTES as R } from '@gateway/contracts/dashboard-owner-routes';
import { callRoute, isApiError, setCsrfToken } from './client';
import type {
  DashboardInvitationAcceptRequest,
  DashboardSession,
  DashboardSignInRequest,
} from './contract';

export const SESSION_KEY = ['session'] as const;

async function fetchSession(): Promise<DashboardSession | null> {
  try {
    const session = await callRoute(R.session, {});
    setCsrfToken(session.csrf_token);
    return session;
  } catch (error) {
    if (isApiError(error) && error.status === 401) {
      setCsrfToken(null);
      return null;
    }
    throw error;
  }
}

/** Who is signed in (null: nobody). Read once per page load, then kept by sign-in and out. */
export function useSession() {
  return useQuery({ queryKey: SESSION_KEY, queryFn: fetchSession, staleTime: Infinity });
}

/** A new session (or none) replaces everything cached for the previous one. */
export function replaceSession(client: QueryClient, session: DashboardSession | null): void {
  setCsrfToken(session?.csrf_token ?? null);
  client.removeQueries({ predicate: (query) => query.queryKey[0] !== SESSION_KEY[0] });
  client.setQueryData(SESSION_KEY, session);
}

export type SignIn = DashboardSignInRequest;

export function useSignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: SignIn) => callRoute(R.signIn, { body }),
    onSuccess: (session) => replaceSession(client, session),
  });
}

export function useAcceptInvitation() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: DashboardInvitationAcceptRequest) => callRoute(R.acceptInvitation, { body }),
    onSuccess: (session) => replaceSession(client, session),
  });
}

export function useSignOut() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => callRoute(R.signOut, {}),
    // Signed out locally even when the server already forgot the session.
    onSettled: () => replaceSession(client, null),
  });
}

export const isOperator = (session: DashboardSession): boolean => session.user.role !== 'owner';
/** Whether the session may change accounts and the catalog (role `finance` only reads). */
export const canEdit = (session: DashboardSession | null | undefined): boolean =>
  session?.user.role === 'operator';
export const homePath = (session: DashboardSession): string =>
  isOperator(session) ? '/operator/accounts' : '/';
