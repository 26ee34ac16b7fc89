import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router, type RequestHandler } from 'express';
import helmet from 'helmet';
import { DASHBOARD_API_PREFIX, GatewayError } from '@gateway/contracts';
import { methodNotAllowed } from '../http/errors.js';

export const DASHBOARD_PATH = '/dashboard';
const API_SEGMENT = DASHBOARD_API_PREFIX.slice(DASHBOARD_PATH.length);

/** The workspace's build output (`apps/dashboard/dist`), found from this module's own place. */
export const WORKSPACE_DASHBOARD_DIR = fileURLToPath(
  new URL('../../../../apps/dashboard/dist', import.meta.url),
);

/**
 * Where the built dashboard is: `DASHBOARD_DIR` (images set it), else the workspace's build.
 * A directory that was named but holds no index.html is a deployment fault: edge refuses to
 * start. Without a name and without a build (a service test), the site is not served.
 */
export function resolveDashboardDir(configured: string): string | null {
  const dir = configured === '' ? WORKSPACE_DASHBOARD_DIR : path.resolve(configured);
  if (existsSync(path.join(dir, 'index.html'))) return dir;
  if (configured !== '') throw new Error(`DASHBOARD_DIR ${dir} holds no index.html`);
  return null;
}

// Scripts and styles from the origin only; no inline script (Vite emits none), no framing.
// Inline styles are allowed: the component library sets style attributes and CSS variables.
const securityHeaders = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'"],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  },
  referrerPolicy: { policy: 'no-referrer' },
  frameguard: { action: 'deny' },
  // TLS is terminated in front of edge; HSTS is the terminator's to send.
  strictTransportSecurity: false,
});

const underApi = (urlPath: string) =>
  urlPath === API_SEGMENT || urlPath.startsWith(`${API_SEGMENT}/`);

/**
 * The single-page app at /dashboard/: hashed assets cached for a year, index.html for every
 * client route and revalidated on each load. `/dashboard/api/...` is left to the API's routes.
 */
export function dashboardSite(dir: string): RequestHandler {
  const site = Router();
  site.use(securityHeaders);
  site.use(
    '/assets',
    express.static(path.join(dir, 'assets'), {
      index: false,
      redirect: false,
      immutable: true,
      maxAge: '365d',
    }),
  );
  // A missing asset is a 404, never index.html (a browser would run HTML as a script).
  site.use('/assets', (req, _res, next) => {
    next(new GatewayError('not_found', `No dashboard asset ${req.baseUrl}${req.path}`));
  });
  site.get('/{*route}', (_req, res) => {
    res.set('Cache-Control', 'no-cache');
    res.sendFile(path.join(dir, 'index.html'), { cacheControl: false });
  });
  site.all('/{*route}', methodNotAllowed(['GET', 'HEAD']));
  return (req, res, next) => {
    if (underApi(req.path)) return next();
    // The app's base is /dashboard/: its relative links resolve from there.
    if (req.originalUrl === DASHBOARD_PATH) return res.redirect(308, `${DASHBOARD_PATH}/`);
    return site(req, res, next);
  };
}
