// Lists the production source files a chat request runs through, after start-up (the measure of
// docs/architecture.md). Starts the local gateway (infra/local/local-gateway.mjs, from dist) in
// a child process over a throwaway RabbitMQ node and data directory, with precise V8 coverage;
// sends one plain and one streamed chat completion to warm up, resets the counters, sends one of
// each again, and prints every workspace source file (`src/**/*.ts`, mapped from `dist/**/*.js`)
// with a function called meanwhile (the stand-in node left out). Background timers that fire in
// that window count too, so the window is kept short. Usage (after `pnpm build`):
// node scripts/job-path-files.mjs
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRabbitMqNode } from '../packages/testing/dist/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(path.join(tmpdir(), 'job-path-'));
// PostgreSQL runs as its own user when this runs as root: it must reach its data directory.
chmodSync(work, 0o755);
const coverageFile = path.join(work, 'coverage.json');
const basePort = 20_000 + Math.floor(Math.random() * 20_000);
const rabbit = await startRabbitMqNode({ baseDir: path.join(work, 'rabbitmq') });
const child = spawn(
  process.execPath,
  ['--import', './scripts/job-path-coverage.mjs', 'infra/local/local-gateway.mjs'],
  {
    cwd: root,
    env: {
      ...process.env,
      AMQP_URL: rabbit.url,
      GATEWAY_DATA_DIR: path.join(work, 'data'),
      GATEWAY_PORT_BASE: String(basePort),
      GATEWAY_POSTGRES_PORT: String(basePort + 20),
      JOB_PATH_COVERAGE_OUT: coverageFile,
      STAND_IN_FIRST_TOKEN_MS: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const exited = new Promise((resolve) => child.once('exit', resolve));
let output = '';
child.stdout.on('data', (chunk) => {
  output += chunk;
  if (process.env.JOB_PATH_DEBUG) process.stderr.write(chunk);
});
const waitFor = async (pattern) => {
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    const match = output.match(pattern);
    if (match) return match;
    if (gone) throw new Error(`gateway exited:\n${output}`);
    await sleep(50);
  }
};

try {
  const [, baseUrl] = await waitFor(/ready in [\d.]+ s: (\S+)/);
  const [, apiKey] = await waitFor(/demo API key\s+(\S+)/);
  const chat = async (stream) => {
    const answer = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        model: 'demo/chat-small',
        stream,
        messages: [{ role: 'user', content: 'Hello' }],
      }),
    });
    const text = await answer.text();
    if (!answer.ok) throw new Error(`chat: ${answer.status} ${text}`);
  };
  const takeCoverage = async () => {
    const taken = output.split('[coverage] taken').length;
    child.kill('SIGUSR2');
    while (output.split('[coverage] taken').length === taken) await sleep(20);
  };
  await chat(false);
  await chat(true);
  // Let the first requests' settlements and background work finish before the reset.
  await sleep(1_000);
  await takeCoverage();
  await chat(false);
  await chat(true);
  // The worker settles after answering: give it time to finish, no more.
  await sleep(300);
  await takeCoverage();
  const files = onPath(JSON.parse(readFileSync(coverageFile, 'utf8')));
  for (const file of files) console.log(file);
  console.log(`${files.length} files`);
} finally {
  child.kill('SIGTERM');
  await exited;
  await rabbit.destroy();
  rmSync(work, { recursive: true, force: true });
}

function onPath(scripts) {
  const files = new Set();
  for (const script of scripts) {
    if (!script.url.startsWith('file://')) continue;
    const file = path.relative(root, fileURLToPath(script.url));
    const source = file.match(/^((?:packages|services)\/[^/]+)\/dist\/(.+)\.js$/);
    // The stand-in model node runs in the same process; it is not the gateway's.
    if (!source || source[1] === 'packages/stand-ins') continue;
    if (!script.functions.some((fn) => fn.ranges[0].count > 0)) continue;
    files.add(`${source[1]}/src/${source[2]}.ts`);
  }
  return [...files].sort();
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
