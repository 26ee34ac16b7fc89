/**
 * Self time of a .cpuprofile (node --cpu-prof) by package and by function, so that a profile can
 * be read without DevTools: profile-summary.mjs prints it, the bench puts the top functions of
 * each service into its report.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** `pnpm/node_modules/<package>` → package; the project's own code → its workspace path. */
function owner(url) {
  if (!url) return '(native / idle / gc)';
  const pkg = /node_modules\/(@[^/]+\/[^/]+|[^/@][^/]*)\//.exec(url.split('.pnpm/').pop() ?? url);
  if (pkg) return pkg[1];
  const own = /\/(services|packages)\/([^/]+)\//.exec(url);
  if (own) return `${own[1]}/${own[2]}`;
  return url.startsWith('node:') ? 'node core' : url;
}

/** Microseconds of self time per profile node id. */
function selfTimesUs(profile) {
  const selfUs = new Map();
  for (let i = 0; i < profile.samples.length; i += 1) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  return selfUs;
}

const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);

/** The `top` heaviest entries of a Map, as { name, selfMs, busyPercent }. */
function heaviest(map, top, busyUs) {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({ name, selfMs: us / 1000, busyPercent: (100 * us) / busyUs }));
}

/**
 * { busyMs, totalMs, packages, functions } of a parsed profile; packages and functions are the
 * `top` heaviest by self time, idle excluded (percentages are of busy time).
 */
export function summariseProfile(profile, top = 15) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const packages = new Map();
  const functions = new Map();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfTimesUs(profile)) {
    const { callFrame } = byId.get(id);
    totalUs += us;
    if (callFrame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const pkg = owner(callFrame.url);
    add(packages, pkg, us);
    add(
      functions,
      `${callFrame.functionName || '(anonymous)'} ${pkg}:${callFrame.lineNumber + 1}`,
      us,
    );
  }
  const busyUs = totalUs - idleUs;
  return {
    busyMs: busyUs / 1000,
    totalMs: totalUs / 1000,
    packages: heaviest(packages, top, busyUs),
    functions: heaviest(functions, top, busyUs),
  };
}

export function summariseProfileFile(file, top) {
  return summariseProfile(JSON.parse(readFileSync(file, 'utf8')), top);
}

/**
 * The `top` heaviest functions of each service's profile in `dir` (<service>.cpuprofile), only
 * from profiles written since `sinceMs` (a stale one from an earlier run is left out).
 */
export function serviceTopFunctions(dir, services, sinceMs, top) {
  const summaries = {};
  for (const service of services) {
    const file = path.join(dir, `${service}.cpuprofile`);
    if (!existsSync(file) || statSync(file).mtimeMs < sinceMs) continue;
    const { busyMs, functions } = summariseProfileFile(file, top);
    summaries[service] = { busyMs, functions };
  }
  return summaries;
}
