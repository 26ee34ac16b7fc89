import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

/*
 * `pnpm test:nemesis [--seed N] [--duration SECONDS] [--rate PER_SECOND]`: runs the nemesis
 * (test/nemesis/README.md) with these as its environment. Without a seed, one is drawn and
 * printed, so any run can be replayed.
 */
const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    duration: { type: 'string', default: '120' },
    rate: { type: 'string', default: '4' },
  },
});
const seed = values.seed ?? String(Math.floor(Math.random() * 2 ** 31));
const durationS = Number(values.duration);
if (!Number.isInteger(durationS) || durationS < 10) {
  console.error('--duration must be a whole number of seconds, at least 10');
  process.exit(2);
}
console.log(`nemesis: seed ${seed}, ${durationS} s, ${values.rate} operations/s`);
// Start-up, the run, the settle wait and the check, with room to spare.
const timeoutMs = (durationS + 15 * 60) * 1_000;
const result = spawnSync(
  process.execPath,
  [
    '--experimental-vm-modules',
    'node_modules/jest/bin/jest.js',
    '-c',
    'test/nemesis/jest.config.js',
    '--runInBand',
    `--testTimeout=${timeoutMs}`,
  ],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      NEMESIS_SEED: seed,
      NEMESIS_DURATION_S: String(durationS),
      NEMESIS_RATE: values.rate,
    },
  },
);
process.exit(result.status ?? 1);
