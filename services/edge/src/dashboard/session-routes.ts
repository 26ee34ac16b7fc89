import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import {
  DASHBOARD_SESSION_ROUTES as R,
  GatewayError,
  type DashboardSession,
  type DashboardStartedSession,
} from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { checkCsrfToken, checkOrigin } from './csrf.js';
import { DEFAULT_SIGN_INS_IN_FLIGHT, type DashboardSettings } from './settings.js';
import { clearSessionCookie, sessionTokenOf, setSessionCookie } from './session-cookie.js';

const STATE_CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The request's session, once `requireSession` found it. */
export function sessionOf(res: Response): DashboardSession {
  return res.locals.dashboardSession as DashboardSession;
}

/**
 * Resolves the cookie's session at billing (401 `session_required` without one) and, on a state
 * change, checks the origin and the session's CSRF token (403 `csrf_failed`).
 */
export function requireSession(deps: ConsoleDeps, settings: DashboardSettings): RequestHandler {
  return async (req, res, next) => {
    const token = sessionTokenOf(req, settings.insecureLoopbackCookie);
    if (token === undefined) throw new GatewayError('session_required', 'Sign in to continue');
    const session = await deps.billing.dashboard.resolveSession(token);
    if (STATE_CHANGES.has(req.method)) {
      checkOrigin(req, settings.publicBaseUrl);
      checkCsrfToken(req, session.csrf_token);
    }
    res.locals.dashboardSession = session;
    res.locals.dashboardToken = token;
    next();
  };
}

/**
 * `DASHBOARD_SESSION_ROUTES`: sign-in, the session, sign-out and invitation acceptance. Each
 * attempt takes one of its address's failed-authentication points before billing is asked (429
 * when none is left) and gives it back only when billing started a session: a wrong password,
 * any refusal and a timeout keep it. At most `DASHBOARD_SIGN_INS_IN_FLIGHT` attempts per replica
 * are at billing at once (more: 503 at once). Billing limits each email
 * (`DASHBOARD_SIGN_IN_FAILURES_PER_HOUR`, shared by every replica) and checks a few passwords at
 * a time (503 beyond). Sign-in and acceptance set the cookie, sign-out clears it (through the
 * handler's `res`; the answer is the route's).
 */
export function sessionRoutes(deps: ConsoleDeps, settings: DashboardSettings): Router {
  const router = express.Router();
  // Sign-in and acceptance have no session yet: the origin check alone (no login CSRF), before
  // the body is checked.
  const starting: RequestHandler[] = [
    deps.authFailures.guard,
    ...jsonBody(deps.limits.jsonBodyBytes),
    (req, _res, next) => {
      checkOrigin(req, settings.publicBaseUrl);
      next();
    },
  ];
  const withSession = [requireSession(deps, settings)];
  const started = (req: Request, res: Response, answer: DashboardStartedSession) => {
    const { token, session } = answer;
    setSessionCookie(req, res, token, session.expires_at, settings.insecureLoopbackCookie);
    return session;
  };
  const inFlightMax = settings.signInsInFlight ?? DEFAULT_SIGN_INS_IN_FLIGHT;
  let inFlight = 0;
  const attempt = async (req: Request, start: () => Promise<DashboardStartedSession>) => {
    const giveBack = await deps.authFailures.take(req);
    // Billing checks a few passwords at a time: beyond a few attempts in flight here, the rest
    // are refused at once (their points kept), without a call to billing.
    if (inFlight >= inFlightMax) {
      throw new GatewayError('service_unavailable', 'Too many sign-ins right now; retry shortly', {
        details: { retryAfterS: 1 },
      });
    }
    inFlight += 1;
    try {
      const answer = await start();
      await giveBack();
      return answer;
    } finally {
      inFlight -= 1;
    }
  };

  serveRoute(
    router,
    R.signIn,
    async ({ req, res, body }) =>
      started(req, res, await attempt(req, () => deps.billing.dashboard.signIn(body))),
    starting,
  );
  serveRoute(router, R.session, async ({ res }) => sessionOf(res), withSession);
  serveRoute(
    router,
    R.signOut,
    async ({ req, res }) => {
      await deps.billing.dashboard.endSession(res.locals.dashboardToken as string);
      clearSessionCookie(req, res, settings.insecureLoopbackCookie);
    },
    withSession,
  );
  serveRoute(
    router,
    R.acceptInvitation,
    async ({ req, res, body }) =>
      started(req, res, await attempt(req, () => deps.billing.dashboard.acceptInvitation(body))),
    starting,
  );
  return router;
}
