/**
 * End-to-end load against a running local gateway: chat completions (JSON or streaming) through
 * edge → bus → worker → stand-in node → billing, every one admitted and settled for real.
 *
 *   bash infra/local/start.sh                     # in one terminal (add the latency settings
 *                                                 # below to measure the gateway alone)
 *   node infra/local/bench-gateway.mjs            # in another
 *
 * To see the gateway's own cost, start it with an instant stand-in node:
 *   STAND_IN_FIRST_TOKEN_MS=0 STAND_IN_TOKENS_PER_SECOND=0 bash infra/local/start.sh
 *
 * Settings (environment):
 *   GATEWAY_URL        edge's base URL, loopback only           (default http://127.0.0.1:8080)
 *   GATEWAY_DATA_DIR   local mode's data directory             (default .data)
 *   GATEWAY_API_KEY    API key (default: the demo key in the data directory)
 *   BENCH_MODEL        chat model                               (default demo/chat-small)
 *   BENCH_STREAM       1: stream and time the first chunk too   (default 0)
 *   BENCH_CONCURRENCY  requests in flight                       (default 16, at most 512)
 *   BENCH_SECONDS      how long to run                          (default 15, at most 600)
 *
 * With the demo key, the demo account's rate limit (100 per minute) is raised through the operator
 * API for the run (admin token from the data directory) and restored afterwards; with another
 * key, raise its account's limit first or the run measures 429s.
 *
 * Prints requests per second, latency p50/p95/p99 (and time to first chunk when streaming),
 * failures by status, DZD charged, and the gateway process's resident memory before and after
 * (from edge's /metrics: in local mode every service shares that process).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const baseUrl = new URL(process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080');
if (!['127.0.0.1', '[::1]', 'localhost'].includes(baseUrl.hostname)) {
  throw new Error('GATEWAY_URL must be a loopback address: this is a local benchmark');
}
const dataDir = path.resolve(process.env.GATEWAY_DATA_DIR ?? path.join(root, '.data'));
const readJson = (file) => JSON.parse(readFileSync(path.join(dataDir, file), 'utf8'));
const demo = process.env.GATEWAY_API_KEY ? undefined : readJson('demo-key.json');
const apiKey = process.env.GATEWAY_API_KEY ?? demo.key;
const model = process.env.BENCH_MODEL ?? 'demo/chat-small';
const stream = process.env.BENCH_STREAM === '1';
const concurrency = setting('BENCH_CONCURRENCY', 16, 512);
const seconds = setting('BENCH_SECONDS', 15, 600);

function setting(name, fallback, max) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new Error(`${name} must be an integer from 1 to ${max}`);
  }
  return value;
}

const headers = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
const body = JSON.stringify({
  model,
  messages: [{ role: 'user', content: 'Describe the Sahara in two sentences.' }],
  max_tokens: 64,
  stream,
});

/** One request; resolves with its timings, or its failure. */
async function oneRequest() {
  const started = performance.now();
  const response = await fetch(new URL('/v1/chat/completions', baseUrl), {
    method: 'POST',
    headers,
    body,
    signal: AbortSignal.timeout(60_000),
  });
  let firstChunkMs;
  if (stream && response.ok) {
    const reader = response.body.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      firstChunkMs ??= performance.now() - started;
    }
  } else {
    await response.arrayBuffer();
  }
  return { status: response.status, totalMs: performance.now() - started, firstChunkMs };
}

async function residentBytes() {
  const text = await (await fetch(new URL('/metrics', baseUrl))).text();
  const line = text.split('\n').find((l) => l.startsWith('process_resident_memory_bytes'));
  return line ? Number(line.split(' ').at(-1)) : NaN;
}

async function balanceDzd() {
  const response = await fetch(new URL('/v1/user/balance', baseUrl), { headers });
  return (await response.json()).balance_dzd;
}

const percentile = (sorted, p) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
const ms = (value) => `${value.toFixed(1)} ms`;
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Sets the demo account's rate limit; returns the previous one (undefined: not the demo key). */
async function setDemoRateLimit(perMinute) {
  if (!demo) return undefined;
  const url = new URL(`/admin/v1/accounts/${demo.accountId}`, baseUrl);
  const admin = { Authorization: `Bearer ${readJson('secrets.json').ADMIN_TOKEN}` };
  const before = await (await fetch(url, { headers: admin })).json();
  const response = await fetch(url, {
    method: 'PATCH',
    headers: { ...admin, 'Content-Type': 'application/json' },
    body: JSON.stringify({ rate_limit_per_minute: perMinute }),
  });
  if (!response.ok) throw new Error(`raising the rate limit: HTTP ${response.status}`);
  return before.rate_limit_per_minute;
}

const previousRateLimit = await setDemoRateLimit(100_000);
const rssBefore = await residentBytes();
const balanceBefore = await balanceDzd();
const deadline = performance.now() + seconds * 1000;
const results = [];
const failures = new Map();

async function loop() {
  while (performance.now() < deadline) {
    try {
      const result = await oneRequest();
      if (result.status === 200) results.push(result);
      else failures.set(result.status, (failures.get(result.status) ?? 0) + 1);
    } catch (error) {
      const kind = error?.name ?? 'error';
      failures.set(kind, (failures.get(kind) ?? 0) + 1);
    }
  }
}

console.log(
  `${stream ? 'streaming' : 'JSON'} chat completions on ${model}, ${concurrency} in flight, ${seconds} s`,
);
const startedAt = performance.now();
let elapsedS;
let balanceAfter;
try {
  await Promise.all(Array.from({ length: concurrency }, loop));
  elapsedS = (performance.now() - startedAt) / 1000;
  // Before the limit is restored: the run used it up.
  balanceAfter = await balanceDzd();
} finally {
  if (previousRateLimit !== undefined) await setDemoRateLimit(previousRateLimit);
}
const rssAfter = await residentBytes();

const totals = results.map((r) => r.totalMs).sort((a, b) => a - b);
console.log(`requests per second: ${(results.length / elapsedS).toFixed(1)}`);
console.log(
  `completed: ${results.length}, failed: ${[...failures.values()].reduce((a, b) => a + b, 0)}`,
);
for (const [kind, count] of failures) console.log(`  failed with ${kind}: ${count}`);
console.log(
  `latency p50 ${ms(percentile(totals, 0.5))}, p95 ${ms(percentile(totals, 0.95))}, p99 ${ms(percentile(totals, 0.99))}`,
);
if (stream) {
  const firsts = results.map((r) => r.firstChunkMs).filter((v) => v !== undefined);
  firsts.sort((a, b) => a - b);
  console.log(
    `first chunk p50 ${ms(percentile(firsts, 0.5))}, p99 ${ms(percentile(firsts, 0.99))}`,
  );
}
console.log(`charged: ${(balanceBefore - balanceAfter).toFixed(6)} DZD`);
console.log(`gateway resident memory: ${mib(rssBefore)} before, ${mib(rssAfter)} after`);
