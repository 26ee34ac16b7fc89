// Preloaded (--import) into the local gateway by scripts/job-path-files.mjs: precise V8 coverage
// from start-up. SIGUSR2 the first time: counters reset (start-up and warm-up forgotten); the
// second time: the counts since then are written to JOB_PATH_COVERAGE_OUT.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
let reset = false;
process.on('SIGUSR2', () => {
  void session.post('Profiler.takePreciseCoverage').then(({ result }) => {
    if (reset) writeFileSync(process.env.JOB_PATH_COVERAGE_OUT, JSON.stringify(result));
    reset = true;
    process.stdout.write('[coverage] taken\n');
  });
});
