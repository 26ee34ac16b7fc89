import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import {
  DashboardInvitationAcceptRequestSchema,
  DashboardSignInRequestSchema,
  GatewayError,
  createBodyValidator,
  type DashboardInvitationAcceptRequest,
  type DashboardSession,
  type DashboardSignInRequest,
} from '@gateway/contracts';
import type { EdgeDeps } from '../deps.js';
import { jsonBody } from '../http/body.js';
import { checkCsrfToken, checkOrigin } from './csrf.js';
import type { DashboardSettings } from './settings.js';
import { SignInLimiter } from './sign-in-limiter.js';
import { clearSessionCookie, sessionTokenOf, setSessionCookie } from './session-cookie.js';

const validateSignIn = createBodyValidator<DashboardSignInRequest>(DashboardSignInRequestSchema);
const validateAccept = createBodyValidator<DashboardInvitationAcceptRequest>(
  DashboardInvitationAcceptRequestSchema,
);
const STATE_CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface StartedSession {
  token: string;
  session: DashboardSession;
}

/** The request's session, once `requireSession` found it. */
export function sessionOf(res: Response): DashboardSession {
  return res.locals.dashboardSession as DashboardSession;
}

/**
 * Resolves the cookie's session at billing (401 `session_required` without one) and, on a state
 * change, checks the origin and the session's CSRF token (403 `csrf_failed`).
 */
export function requireSession(deps: EdgeDeps, settings: DashboardSettings): RequestHandler {
  return async (req, res, next) => {
    const token = sessionTokenOf(req, settings.insecureLoopbackCookie);
    if (token === undefined) throw new GatewayError('session_required', 'Sign in to continue');
    const session = await deps.billing.dashboard<DashboardSession>('POST', '/sessions/resolve', {
      token,
    });
    if (STATE_CHANGES.has(req.method)) {
      checkOrigin(req, settings.publicBaseUrl);
      checkCsrfToken(req, session.csrf_token);
    }
    res.locals.dashboardSession = session;
    res.locals.dashboardToken = token;
    next();
  };
}

/** `/dashboard/api/session` and `/dashboard/api/invitations/accept`. */
export function sessionRoutes(deps: EdgeDeps, settings: DashboardSettings): Router {
  const router = express.Router();
  const signIns = new SignInLimiter(settings.signInFailuresPerHour);
  const body = jsonBody(deps.limits.jsonBodyBytes);
  const started = (req: Request, res: Response, answer: StartedSession) => {
    const { token, session } = answer;
    setSessionCookie(req, res, token, session.expires_at, settings.insecureLoopbackCookie);
    res.json(session);
  };
  const guarded = <T>(req: Request, work: () => Promise<T>) =>
    work().catch(async (error: unknown) => {
      await deps.authFailures.countFailure(req, error);
      throw error;
    });

  router.post('/session', deps.authFailures.guard, ...body, async (req, res) => {
    checkOrigin(req, settings.publicBaseUrl);
    const input = validateSignIn(req.body);
    await signIns.guard(input.email);
    const answer = await guarded(req, () =>
      deps.billing.dashboard<StartedSession>('POST', '/sessions', input),
    ).catch(async (error: unknown) => {
      if (error instanceof GatewayError && error.code === 'invalid_credentials') {
        await signIns.countFailure(input.email);
      }
      throw error;
    });
    started(req, res, answer);
  });
  router.get('/session', requireSession(deps, settings), (_req, res) => {
    res.json(sessionOf(res));
  });
  router.delete('/session', requireSession(deps, settings), async (req, res) => {
    await deps.billing.dashboard('POST', '/sessions/end', { token: res.locals.dashboardToken });
    clearSessionCookie(req, res, settings.insecureLoopbackCookie);
    res.status(204).end();
  });
  router.post('/invitations/accept', deps.authFailures.guard, ...body, async (req, res) => {
    checkOrigin(req, settings.publicBaseUrl);
    const input = validateAccept(req.body);
    const answer = await guarded(req, () =>
      deps.billing.dashboard<StartedSession>('POST', '/invitations/accept', input),
    );
    started(req, res, answer);
  });
  return router;
}
