/**
 * Summarises .cpuprofile files (node --cpu-prof, e.g. from `BENCH_CPU_PROF=1 pnpm bench`): self
 * time by package and the heaviest functions, so a profile can be read without DevTools.
 *
 *   node infra/bench/profile-summary.mjs .bench/profiles/edge.cpuprofile [top=15]
 */
import { summariseProfileFile } from './profiles.mjs';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: profile-summary.mjs <file.cpuprofile> [top]');
  process.exit(2);
}
const summary = summariseProfileFile(file, Number(topArg ?? 15));
const line = ({ name, busyPercent }) => `  ${busyPercent.toFixed(1).padStart(5)}%  ${name}`;
console.log(
  `${file}: busy ${(summary.busyMs / 1000).toFixed(2)} s of ${(summary.totalMs / 1000).toFixed(2)} s`,
);
console.log('\nself time by package');
for (const entry of summary.packages) console.log(line(entry));
console.log('\nheaviest functions (self time)');
for (const entry of summary.functions) console.log(line(entry));
