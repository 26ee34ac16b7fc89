/**
 * Portkey's open-source gateway, the proxy-only reference: installed on demand with npm into a
 * git-ignored cache (never a workspace dependency), pinned with the overrides its own lockfile
 * uses for 1.15.2 (a newer @hono/node-server breaks every streamed request), and started on
 * loopback through a preload that rewrites its listen().
 */
import { spawn, execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { freeLoopbackPort } from '../../packages/testing/dist/index.js';

export const PORTKEY_VERSION = '1.15.2';
const manifest = {
  name: 'bench-portkey',
  private: true,
  dependencies: { '@portkey-ai/gateway': PORTKEY_VERSION },
  overrides: { '@hono/node-server': '1.13.5', '@hono/node-ws': '1.2.0', hono: '4.9.7' },
};
const INSTALL_TIMEOUT_MS = 180_000;
const READY_TIMEOUT_MS = 20_000;

/** Installs (when the manifest changed or nothing is there) and returns the entry point. */
export async function installPortkey(cacheDir) {
  const entry = path.join(cacheDir, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  const manifestFile = path.join(cacheDir, 'package.json');
  const wanted = `${JSON.stringify(manifest, null, 2)}\n`;
  const current = existsSync(manifestFile) ? readFileSync(manifestFile, 'utf8') : '';
  if (current === wanted && existsSync(entry)) return entry;
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(manifestFile, wanted);
  const args = ['install', '--no-audit', '--no-fund', '--omit=dev', '--ignore-scripts'];
  await promisify(execFile)('npm', [...args, '--no-package-lock'], {
    cwd: cacheDir,
    timeout: INSTALL_TIMEOUT_MS,
  }).catch((error) => {
    const said = String(error.stderr ?? '')
      .split('\n')
      .filter((line) => line.startsWith('npm error') && !line.includes('complete log'));
    const why = said.slice(0, 2).join('; ') || error.message;
    throw new Error(`npm install of @portkey-ai/gateway@${PORTKEY_VERSION} failed: ${why}`);
  });
  if (!existsSync(entry)) throw new Error(`npm installed no ${entry}`);
  return entry;
}

/** Starts it on a free loopback port and waits until it answers. */
export async function startPortkey(entry) {
  const port = await freeLoopbackPort();
  const preload = fileURLToPath(new URL('portkey-loopback.mjs', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--import', pathToFileURL(preload).href, entry, `--port=${port}`, '--headless'],
    { env: { ...process.env, NODE_ENV: 'production' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`Portkey exited with ${child.exitCode}: ${stderr}`);
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(1000) })).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`Portkey did not answer within ${READY_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { url, pid: child.pid, child };
}
