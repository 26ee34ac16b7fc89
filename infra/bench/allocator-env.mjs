/**
 * The allocator settings the images ship (the Dockerfile's `runtime` stage, `ENV MALLOC_*`), so
 * the bench measures the services as they run in production (ADR 0071). Read from the
 * Dockerfile itself: one place to change them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

export function imageAllocatorEnv(dockerfile = path.join(root, 'Dockerfile')) {
  const text = readFileSync(dockerfile, 'utf8');
  const runtime = /^FROM \S+ AS runtime$([\s\S]*?)(?=^FROM )/m.exec(text)?.[1] ?? '';
  const env = {};
  for (const [, name, value] of runtime.matchAll(/\b(MALLOC_[A-Z_]+)=(\S+)/g)) env[name] = value;
  if (Object.keys(env).length === 0)
    throw new Error(`${dockerfile}: no MALLOC_* in its runtime stage`);
  return env;
}

/** BENCH_MALLOC (settings.mjs checks its value): `default` runs glibc's own settings. */
export function serviceAllocatorEnv(env = process.env) {
  return env.BENCH_MALLOC === 'default' ? {} : imageAllocatorEnv();
}
