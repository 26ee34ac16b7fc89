import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createLogger, createServiceMetrics } from '@gateway/observability';
import { createServiceApp, finishApp } from '@gateway/runtime';
import {
  DASHBOARD_PATH,
  WORKSPACE_DASHBOARD_DIR,
  dashboardSite,
  resolveDashboardDir,
} from './dashboard-site.js';

/*
 * The dashboard's static site as edge serves it: headers, caching, the SPA fallback, and the
 * API prefix left to the API. The last test reads the real Vite build (`pnpm run build`).
 */

const silent = new Writable({ write: (_c, _e, cb) => cb() });
const INDEX =
  '<!doctype html><div id="root"></div><script type="module" src="/dashboard/assets/app-1a2b3c.js"></script>';
let dir: string;
let app: ReturnType<typeof createServiceApp>;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'dashboard-site-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), INDEX);
  writeFileSync(path.join(dir, 'assets', 'app-1a2b3c.js'), 'console.log(1);');
  const logger = createLogger({ service: 'edge', destination: silent });
  app = createServiceApp({
    logger,
    metrics: createServiceMetrics('edge', { defaultMetrics: false }),
    readiness: [],
    isShuttingDown: () => false,
  });
  app.use(DASHBOARD_PATH, dashboardSite(dir));
  app.get('/dashboard/api/ping', (_req, res) => void res.json({ pong: true }));
  finishApp(app, logger);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('dashboard site', () => {
  it('serves index.html with a CSP that forbids inline scripts and framing, never cached', async () => {
    const response = await request(app).get('/dashboard/').expect(200);
    expect(response.text).toBe(INDEX);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['cache-control']).toBe('no-cache');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'self'");
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(response.headers['x-frame-options']).toBe('DENY');
  });

  it('answers client routes with index.html (the app routes them)', async () => {
    for (const route of [
      '/dashboard/api-keys',
      '/dashboard/operator/accounts/acct_1',
      '/dashboard/invitation',
    ]) {
      const response = await request(app).get(route).expect(200);
      expect(response.text).toBe(INDEX);
      expect(response.headers['cache-control']).toBe('no-cache');
    }
  });

  it('redirects /dashboard to /dashboard/', async () => {
    const response = await request(app).get('/dashboard').expect(308);
    expect(response.headers.location).toBe('/dashboard/');
  });

  it('caches hashed assets for a year, immutable', async () => {
    const response = await request(app).get('/dashboard/assets/app-1a2b3c.js').expect(200);
    expect(response.headers['content-type']).toMatch(/javascript/);
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(response.headers['content-security-policy']).toBeDefined();
  });

  it('answers a missing asset 404 in the error shape, not index.html', async () => {
    const response = await request(app).get('/dashboard/assets/gone-000.js').expect(404);
    expect(response.body).toMatchObject({ error: { code: 'not_found' } });
  });

  it('leaves /dashboard/api to the API (JSON, no fallback)', async () => {
    await request(app).get('/dashboard/api/ping').expect(200, { pong: true });
    const missing = await request(app).get('/dashboard/api/nope').expect(404);
    expect(missing.body).toMatchObject({ error: { code: 'not_found' } });
  });

  it('refuses other methods with 405 and Allow', async () => {
    const response = await request(app).post('/dashboard/api-keys').expect(405);
    expect(response.headers.allow).toBe('GET, HEAD');
    expect(response.body).toMatchObject({ error: { code: 'method_not_allowed' } });
  });

  it('does not serve files outside its directory', async () => {
    await request(app).get('/dashboard/assets/..%2f..%2fetc%2fpasswd').expect(404);
    const traversal = await request(app).get('/dashboard/../package.json');
    expect(traversal.text).not.toContain('"name"');
  });

  it('refuses to start on a named directory without index.html; no build means no site', () => {
    expect(() => resolveDashboardDir(path.join(dir, 'assets'))).toThrow(/index\.html/);
    expect(resolveDashboardDir(dir)).toBe(dir);
  });

  it('the Vite build has no inline script and only same-origin assets', () => {
    const html = readFileSync(path.join(WORKSPACE_DASHBOARD_DIR, 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc="\/dashboard\/assets\//);
      expect(body!.trim()).toBe('');
    }
    expect(html).not.toMatch(/\bon[a-z]+=/i);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });
});
