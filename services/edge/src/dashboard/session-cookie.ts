import { isIP } from 'node:net';
import type { Request, Response } from 'express';
import { parse as parseCookies, serialize } from 'cookie';
import { DASHBOARD_DEV_SESSION_COOKIE, DASHBOARD_SESSION_COOKIE } from '@gateway/contracts';

/**
 * The `__Host-` cookie must have `Path=/` (it then also travels to `/v1` and `/admin`, which
 * authenticate with bearer credentials only and never read it); the development cookie stays on
 * the dashboard's path.
 */
function cookieOf(req: Request, insecureLoopback: boolean) {
  return cookieMustBeSecure(req, insecureLoopback)
    ? { name: DASHBOARD_SESSION_COOKIE, path: '/', secure: true }
    : { name: DASHBOARD_DEV_SESSION_COOKIE, path: '/dashboard', secure: false };
}

/** The session token of the cookie this request may carry (only that one: never a fallback). */
export function sessionTokenOf(req: Request, insecureLoopback: boolean): string | undefined {
  const header = req.get('Cookie');
  if (!header) return undefined;
  const token = parseCookies(header)[cookieOf(req, insecureLoopback).name];
  return token && token.length <= 128 ? token : undefined;
}

function isLoopbackHost(hostname: string | undefined): boolean {
  const host = (hostname ?? '').replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/**
 * `Secure` always, except — when `DASHBOARD_INSECURE_LOOPBACK_COOKIE` is on (development: local
 * mode, Compose) — for a request made over plain HTTP to a loopback host, i.e. the browser is at
 * `http://127.0.0.1:8080/dashboard/` or `http://localhost:…`. What counts is the address the
 * browser used (the Host header; Compose's published port arrives from Docker's bridge, not from
 * a loopback socket). Any other host, or HTTPS, gets `Secure` whatever the setting.
 */
export function cookieMustBeSecure(req: Request, insecureLoopback: boolean): boolean {
  return !(insecureLoopback && !req.secure && isLoopbackHost(req.hostname));
}

export function setSessionCookie(
  req: Request,
  res: Response,
  token: string,
  expiresAt: string,
  insecureLoopback: boolean,
): void {
  const maxAgeS = Math.max(0, Math.floor((Date.parse(expiresAt) - Date.now()) / 1000));
  const { name, path, secure } = cookieOf(req, insecureLoopback);
  res.append(
    'Set-Cookie',
    serialize(name, token, { httpOnly: true, sameSite: 'strict', secure, path, maxAge: maxAgeS }),
  );
}

export function clearSessionCookie(req: Request, res: Response, insecureLoopback: boolean): void {
  const { name, path, secure } = cookieOf(req, insecureLoopback);
  res.append(
    'Set-Cookie',
    serialize(name, '', { httpOnly: true, sameSite: 'strict', secure, path, maxAge: 0 }),
  );
}
