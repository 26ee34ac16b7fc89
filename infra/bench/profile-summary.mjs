/**
 * Summarises .cpuprofile files (node --cpu-prof, e.g. from `BENCH_CPU_PROF=1 pnpm bench`): self
 * time by package and the heaviest functions, so a profile can be read without DevTools.
 *
 *   node infra/bench/profile-summary.mjs .bench/profiles/edge.cpuprofile [top=15]
 */
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: profile-summary.mjs <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(topArg ?? 15);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfUs = new Map();
for (let i = 0; i < profile.samples.length; i += 1) {
  const id = profile.samples[i];
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}

/** `pnpm/node_modules/<package>` → package; the project's own code → its workspace path. */
function owner(url) {
  if (!url) return '(native / idle / gc)';
  const pkg = /node_modules\/(@[^/]+\/[^/]+|[^/@][^/]*)\//.exec(url.split('.pnpm/').pop() ?? url);
  if (pkg) return pkg[1];
  const own = /\/(services|packages)\/([^/]+)\//.exec(url);
  if (own) return `${own[1]}/${own[2]}`;
  return url.startsWith('node:') ? 'node core' : url;
}

const packages = new Map();
const functions = new Map();
let totalUs = 0;
let idleUs = 0;
for (const [id, us] of selfUs) {
  const { callFrame } = byId.get(id);
  totalUs += us;
  if (callFrame.functionName === '(idle)') {
    idleUs += us;
    continue;
  }
  const pkg = owner(callFrame.url);
  packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  const name = `${callFrame.functionName || '(anonymous)'} ${pkg}:${callFrame.lineNumber + 1}`;
  functions.set(name, (functions.get(name) ?? 0) + us);
}
const busyUs = totalUs - idleUs;
const pct = (us) => `${((100 * us) / busyUs).toFixed(1).padStart(5)}%`;
console.log(`${file}: busy ${(busyUs / 1e6).toFixed(2)} s of ${(totalUs / 1e6).toFixed(2)} s`);
console.log('\nself time by package');
for (const [pkg, us] of [...packages].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`  ${pct(us)}  ${pkg}`);
}
console.log('\nheaviest functions (self time)');
for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`  ${pct(us)}  ${name}`);
}
