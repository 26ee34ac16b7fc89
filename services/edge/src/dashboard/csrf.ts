import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { DASHBOARD_CSRF_HEADER, GatewayError } from '@gateway/contracts';

const digest = (value: string) => createHash('sha256').update(value).digest();

const refused = (why: string) => new GatewayError('csrf_failed', why);

/**
 * A state change must come from the dashboard's own origin. When the browser sends `Origin`, it
 * must be `PUBLIC_BASE_URL`'s origin (when set) or name the host the request was sent to;
 * `Sec-Fetch-Site`, when sent, must be `same-origin`. (SameSite=Strict already keeps the cookie
 * off cross-site requests; this also covers sign-in, which has no session yet.)
 */
export function checkOrigin(req: Request, publicBaseUrl: string | undefined): void {
  const site = req.get('Sec-Fetch-Site');
  if (site !== undefined && site !== 'same-origin') throw refused('Cross-site request refused');
  const origin = req.get('Origin');
  if (origin === undefined) return;
  let sent: URL;
  try {
    sent = new URL(origin);
  } catch {
    throw refused('Cross-origin request refused');
  }
  const ok = publicBaseUrl
    ? sent.origin === new URL(publicBaseUrl).origin
    : sent.host === req.get('Host');
  if (!ok) throw refused('Cross-origin request refused');
}

/** The session's CSRF token in `X-CSRF-Token`, compared in constant time. */
export function checkCsrfToken(req: Request, expected: string): void {
  const sent = req.get(DASHBOARD_CSRF_HEADER);
  if (sent === undefined || !timingSafeEqual(digest(sent), digest(expected))) {
    throw refused(`State changes need the session's ${DASHBOARD_CSRF_HEADER} header`);
  }
}
