import { isIP } from 'node:net';
import type { Request, Response } from 'express';
import { parse as parseCookies, serialize } from 'cookie';
import { DASHBOARD_SESSION_COOKIE } from '@gateway/contracts';

/** The cookie is sent to the dashboard only (not to `/v1`, `/admin`). */
const COOKIE_PATH = '/dashboard';

export function sessionTokenOf(req: Request): string | undefined {
  const header = req.get('Cookie');
  if (!header) return undefined;
  const token = parseCookies(header)[DASHBOARD_SESSION_COOKIE];
  return token && token.length <= 128 ? token : undefined;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.replace(/^::ffff:/i, '');
  if (isIP(plain) === 4) return plain.startsWith('127.');
  return plain === '::1';
}

/**
 * `Secure` always, except — when `DASHBOARD_INSECURE_LOOPBACK_COOKIE` is on (development) — for
 * a request that reached edge over plain HTTP on a loopback socket and names a loopback host
 * (`http://127.0.0.1:8080/dashboard/`): browsers would not send a Secure cookie back there. A
 * proxy in front makes its requests non-loopback or names a public host, so they stay Secure.
 */
export function cookieMustBeSecure(req: Request, insecureLoopback: boolean): boolean {
  if (!insecureLoopback) return true;
  const loopback =
    !req.secure && isLoopbackAddress(req.socket.remoteAddress) && LOOPBACK_HOSTS.has(req.hostname);
  return !loopback;
}

export function setSessionCookie(
  req: Request,
  res: Response,
  token: string,
  expiresAt: string,
  insecureLoopback: boolean,
): void {
  const maxAgeS = Math.max(0, Math.floor((Date.parse(expiresAt) - Date.now()) / 1000));
  res.append(
    'Set-Cookie',
    serialize(DASHBOARD_SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'strict',
      secure: cookieMustBeSecure(req, insecureLoopback),
      path: COOKIE_PATH,
      maxAge: maxAgeS,
    }),
  );
}

export function clearSessionCookie(req: Request, res: Response, insecureLoopback: boolean): void {
  res.append(
    'Set-Cookie',
    serialize(DASHBOARD_SESSION_COOKIE, '', {
      httpOnly: true,
      sameSite: 'strict',
      secure: cookieMustBeSecure(req, insecureLoopback),
      path: COOKIE_PATH,
      maxAge: 0,
    }),
  );
}
