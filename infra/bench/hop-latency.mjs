/**
 * What one more process in a request's path costs in latency on this host, with no work in it:
 * a client calls a chain of plain Node HTTP servers over loopback keep-alive connections, each
 * relaying the call to the next and the answer back, and the last answering at once. Chains of
 * 0, 1 and 2 relays are timed with the processes idle between requests (`HOP_GAP_MS` apart, as
 * in the open loop and the streaming probe) and back to back (as in the closed loop). Each
 * relay adds two messages (the call and its answer) and two wake-ups. The gateway's path has
 * two relays (edge, the worker) and two PostgreSQL round trips more than a direct call:
 * docs/scaling.md, "Latency: the path's floor".
 *
 *   node infra/bench/hop-latency.mjs      # HOP_REQUESTS=200 HOP_GAP_MS=150
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import { summarize } from './load.mjs';

const requests = Number(process.env.HOP_REQUESTS ?? 200);
const gapMs = Number(process.env.HOP_GAP_MS ?? 150);
const WARMUP_REQUESTS = 50;
const MAX_RELAYS = 2;

/** A child: answers every call, or relays it to `nextPort` first. Reports its port over IPC. */
function serve(nextPort) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const relay = (done) =>
    http
      .request({ host: '127.0.0.1', port: nextPort, method: 'POST', agent }, (answer) => {
        answer.resume();
        answer.on('end', done);
      })
      .end('{}');
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => (nextPort ? relay(() => res.end('{}')) : res.end('{}')));
  });
  server.listen(0, '127.0.0.1', () => process.send?.(server.address().port));
}

function start(nextPort) {
  return new Promise((resolve, reject) => {
    const child = fork(new URL(import.meta.url).pathname, ['serve', String(nextPort)]);
    child.once('message', (port) => resolve({ child, port }));
    child.once('error', reject);
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function timedCall(port) {
  return new Promise((resolve, reject) => {
    const startedNs = process.hrtime.bigint();
    http
      .request({ host: '127.0.0.1', port, method: 'POST', agent }, (answer) => {
        answer.resume();
        answer.on('end', () => resolve(Number(process.hrtime.bigint() - startedNs) / 1e6));
      })
      .on('error', reject)
      .end('{}');
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function measure(port, pauseMs) {
  const timesMs = [];
  for (let i = 0; i < requests; i++) {
    if (pauseMs > 0) await sleep(pauseMs);
    timesMs.push(await timedCall(port));
  }
  const { p50Ms, p90Ms } = summarize(timesMs);
  return { p50: p50Ms, p90: p90Ms };
}

async function main() {
  const children = [];
  try {
    // The chain is built from its end: the answering server, then each relay in front of it.
    let port = 0;
    const entries = [];
    for (let relays = 0; relays <= MAX_RELAYS; relays++) {
      const started = await start(port);
      children.push(started.child);
      port = started.port;
      entries.push({ relays, port });
    }
    const rows = [];
    for (const { relays, port: entry } of entries) {
      for (let i = 0; i < WARMUP_REQUESTS; i++) await timedCall(entry);
      rows.push({ relays, idle: await measure(entry, gapMs), busy: await measure(entry, 0) });
    }
    const ms = (value) => value.toFixed(2).padStart(6);
    console.log(`round trip, ms (${requests} requests each; idle = ${gapMs} ms apart)`);
    console.log('relays | idle p50 | idle p90 | back-to-back p50 | back-to-back p90');
    for (const { relays, idle, busy } of rows) {
      console.log(
        `${String(relays).padStart(6)} | ${ms(idle.p50)}   | ${ms(idle.p90)}   | ${ms(busy.p50)}           | ${ms(busy.p90)}`,
      );
    }
    const perRelay = (pick) => (pick(rows[MAX_RELAYS]) - pick(rows[0])) / MAX_RELAYS;
    console.log(
      `each relay adds ${perRelay((r) => r.idle.p50).toFixed(2)} ms idle, ` +
        `${perRelay((r) => r.busy.p50).toFixed(2)} ms back to back (p50)`,
    );
  } finally {
    for (const child of children) child.kill();
  }
}

if (process.argv[2] === 'serve') serve(Number(process.argv[3]));
else await main();
