// The compose topology (docker-compose.yml) as podman containers on the host network: each
// container gets its compose environment with addresses moved to loopback (PostgreSQL and
// RabbitMQ run on the host, started by @gateway/testing; every service binds 127.0.0.1 on a
// port of its own, so two edges and two workers can run side by side).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { parse } from 'yaml';

const run = promisify(execFile);
const TAG = process.env.IMAGES_TAG ?? 'test';
export const image = (name) => `localhost/inference-gateway/${name}:${TAG}`;
export const BASE_IMAGE = 'localhost/gateway-node-base:test';
const PREFIX = 'gateway-images-test-';
const COMPOSE_HOSTS = ['postgres', 'rabbitmq', 'billing', 'dispatcher', 'inference-worker', 'edge'];

const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true });

/** `${NAME:-default}` as compose expands it, from this process's environment. */
const expand = (value) =>
  String(value).replace(
    /\$\{(\w+):-([^}]*)\}/g,
    (_, name, fallback) => process.env[name] || fallback,
  );

export const composeService = (name) => {
  const service = compose.services[name];
  if (!service) throw new Error(`docker-compose.yml has no service ${name}`);
  return service;
};

/** A compose service's environment, expanded, with `overrides` applied; no compose host left. */
export function composeEnv(name, overrides) {
  const env = {};
  for (const [key, value] of Object.entries(composeService(name).environment ?? {})) {
    env[key] = expand(value);
  }
  Object.assign(env, overrides);
  for (const [key, value] of Object.entries(env)) {
    const host = COMPOSE_HOSTS.find((h) => new RegExp(`//([^/@]*@)?${h}[:/]`).test(value));
    if (host) throw new Error(`${name}: ${key} still points at compose host ${host}`);
  }
  return env;
}

/** One setting of a compose service's environment, expanded (e.g. a secret's example value). */
export const composeSetting = (name, key) => expand(composeService(name).environment[key]);

export const composeCommand = (name) => (composeService(name).command ?? []).map(expand);

export const podman = async (args, timeoutMs = 120_000) =>
  (await run('podman', args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 })).stdout;

export const started = [];

/**
 * `podman run` with compose's hardening (read-only root, /tmp tmpfs, no capabilities, no new
 * privileges) on the host network. Detached unless `oneShot`; resolves with stdout for one-shots.
 */
export async function runContainer(
  name,
  img,
  { env = {}, entrypoint, args = [], mounts = [], oneShot = false },
) {
  const flags = ['run', '--name', PREFIX + name, '--network', 'host', '--read-only'];
  flags.push('--tmpfs', '/tmp', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges');
  for (const [key, value] of Object.entries(env)) flags.push('--env', `${key}=${value}`);
  for (const mount of mounts) flags.push('--volume', mount);
  if (entrypoint) flags.push('--entrypoint', JSON.stringify(entrypoint));
  flags.push(oneShot ? '--rm' : '--detach', img, ...args);
  if (!oneShot) started.push(name);
  return podman(flags);
}

/** Stops a container with SIGTERM; resolves with its exit code and how long it took. */
export async function stopContainer(name, graceS) {
  const t0 = Date.now();
  await podman(['stop', '--time', String(graceS), PREFIX + name], (graceS + 30) * 1000);
  const code = Number(
    (await podman(['inspect', '--format', '{{.State.ExitCode}}', PREFIX + name])).trim(),
  );
  return { code, elapsedMs: Date.now() - t0 };
}

export async function logsOf(name) {
  try {
    const { stdout, stderr } = await run('podman', ['logs', '--tail', '25', PREFIX + name]);
    return stdout + stderr;
  } catch (error) {
    return String(error.message);
  }
}

/** Removes this test's containers (those of an earlier, interrupted run too). */
export async function removeAll() {
  const names = (await podman(['ps', '--all', '--format', '{{.Names}}'])).split('\n');
  const ours = names.filter((n) => n.startsWith(PREFIX));
  if (ours.length > 0)
    await podman(['rm', '--force', '--time', '0', ...ours]).catch(() => undefined);
}
