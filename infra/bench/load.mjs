/**
 * Load generators over node:http with keep-alive agents, one timing per response (sub-ms):
 * a closed loop (N connections, each sends when its previous answer is in), a true open loop
 * (sends on a timer whatever is still in flight) and a streaming probe.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const REQUEST_TIMEOUT_MS = 30_000;
/** Below the 5 s keep-alive of the services and of Node's servers. */
const IDLE_SOCKET_TIMEOUT_MS = 4_000;

/** Nearest-rank percentile of an ascending array (NaN when empty). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function summarize(latenciesMs) {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
  };
}

/**
 * A target: where to send and what. `path` and `headers` (or `headerSets`, taken in turn) differ
 * per system under test; the body is the same chat completion everywhere.
 */
export function createClient(target, { maxSockets }) {
  // An idle socket is closed by the client before the server's keep-alive ends (Node's agent
  // then takes the server's announced timeout less 1 s, given a timeout of its own): without
  // one, a request sent on a socket the server was closing failed with ECONNRESET, which the
  // slices, leaving sockets idle while other targets run, made happen. So a target's sockets
  // outlive the other targets' slices only if those take less than 4 s together.
  const agent = new http.Agent({
    keepAlive: true,
    maxSockets,
    maxFreeSockets: maxSockets,
    timeout: IDLE_SOCKET_TIMEOUT_MS,
  });
  const url = new URL(target.url);
  if (!['127.0.0.1', '[::1]'].includes(url.hostname)) throw new Error('loopback targets only');
  // A target with several credentials (`headerSets`) uses them in turn, one per request.
  const headerSets = target.headerSets ?? [target.headers];
  let sent = 0;
  /**
   * Sends one request. onChunk(timeMs) is called at each body chunk's arrival. Resolves with the
   * status and the full body; never rejects (a network error is status 0, `error` its kind).
   */
  const send = (body, onChunk) =>
    new Promise((resolve) => {
      const payload = Buffer.from(JSON.stringify(body));
      const req = http.request(
        {
          agent,
          host: url.hostname.replace(/[[\]]/g, ''),
          port: url.port,
          method: 'POST',
          path: `${url.pathname.replace(/\/$/, '')}${target.path}`,
          headers: {
            ...headerSets[sent++ % headerSets.length],
            'content-type': 'application/json',
          },
        },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => {
            onChunk?.(performance.now(), chunk);
            chunks.push(chunk);
          });
          res.on('end', () =>
            resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', (error) => resolve({ status: 0, body: '', error: failureName(error) }));
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () =>
        req.destroy(Object.assign(new Error('timed out'), { code: 'timeout' })),
      );
      req.on('error', (error) => resolve({ status: 0, body: '', error: failureName(error) }));
      req.end(payload);
    });
  return { send, close: () => agent.destroy() };
}

/** A failure without an answer, named by its code: `network ECONNRESET`, `network timeout`. */
const failureName = (error) => `network ${error?.code ?? 'error'}`;

/** Counts an answer other than 200 under its status, or a failure without one under its name. */
export const countError = (errors, { status, error }) => {
  const key = status === 0 ? error : `HTTP ${status}`;
  errors[key] = (errors[key] ?? 0) + 1;
};

/** `connections` loops, each sending its next request when its previous answer is in. */
export async function closedLoop(client, body, { connections, seconds }) {
  const latencies = [];
  const errors = {};
  const begin = performance.now();
  const deadline = begin + seconds * 1000;
  const loop = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const answer = await client.send(body);
      if (answer.status === 200) latencies.push(performance.now() - t0);
      else countError(errors, answer);
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsedS = (performance.now() - begin) / 1000;
  return {
    ok: latencies.length,
    errors,
    elapsedS,
    reqPerS: latencies.length / elapsedS,
    ...summarize(latencies),
    latenciesMs: latencies,
  };
}

/**
 * The send times of an open loop: request i is due at i / rate seconds after the start. Each
 * timer tick sends every request that is due by then, so a late timer catches up instead of
 * shifting the schedule, and latency counts from the due time (no coordinated omission).
 */
export function dueRequests(startedMs, nowMs, alreadySent, ratePerS, total) {
  const due = Math.min(total, Math.floor(((nowMs - startedMs) * ratePerS) / 1000) + 1);
  return Math.max(0, due - alreadySent);
}

export async function openLoop(client, body, { ratePerS, seconds, drainMs = 30_000 }) {
  const total = Math.round(ratePerS * seconds);
  const latencies = [];
  const errors = {};
  const inFlight = new Set();
  const startedMs = performance.now();
  let sent = 0;
  let maxInFlight = 0;
  const fire = (dueMs) => {
    const answer = client.send(body).then((answered) => {
      if (answered.status === 200) latencies.push(performance.now() - dueMs);
      else countError(errors, answered);
      inFlight.delete(answer);
    });
    inFlight.add(answer);
    maxInFlight = Math.max(maxInFlight, inFlight.size);
  };
  await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      for (let n = dueRequests(startedMs, now, sent, ratePerS, total); n > 0; n -= 1) {
        fire(startedMs + (sent * 1000) / ratePerS);
        sent += 1;
      }
      if (sent >= total) resolve();
      else setTimeout(tick, Math.max(0, startedMs + (sent * 1000) / ratePerS - performance.now()));
    };
    tick();
  });
  let drainTimer;
  const drained = await Promise.race([
    Promise.all(inFlight).then(() => true),
    new Promise((resolve) => (drainTimer = setTimeout(resolve, drainMs, false))),
  ]);
  // Cleared: a slice's timer left running would hold the process up to drainMs after the phase.
  clearTimeout(drainTimer);
  if (!drained) errors['unanswered after the run'] = inFlight.size;
  return {
    sent,
    ok: latencies.length,
    errors,
    maxInFlight,
    ...summarize(latencies),
    latenciesMs: latencies,
  };
}

/**
 * Streams one at a time (`count` of them): time to the first body byte, and the gaps between
 * the SSE events that carry content, to tell relayed-as-they-come from buffered.
 */
export async function streamProbe(client, body, { count }) {
  const firstByte = [];
  const spreads = [];
  const errors = {};
  for (let i = 0; i < count; i += 1) {
    const t0 = performance.now();
    let first;
    const contentAt = [];
    let streamed = '';
    const answer = await client.send(body, (at, chunk) => {
      first ??= at - t0;
      const text = chunk.toString('utf8');
      streamed += text;
      const events = text.match(/"content":"[^"]+"/g)?.length ?? 0;
      for (let n = 0; n < events; n += 1) contentAt.push(at);
    });
    if (answer.status !== 200 || first === undefined) {
      countError(errors, answer);
      continue;
    }
    // A stream that started (200) can still fail: an error event, or no `[DONE]`.
    if (/^data: \{"error":/m.test(streamed) || !streamed.includes('data: [DONE]')) {
      errors['stream ended with an error'] = (errors['stream ended with an error'] ?? 0) + 1;
      continue;
    }
    firstByte.push(first);
    spreads.push(contentAt.length > 1 ? contentAt.at(-1) - contentAt[0] : 0);
  }
  const sortedFirst = [...firstByte].sort((a, b) => a - b);
  return {
    ok: firstByte.length,
    errors,
    firstByteP50Ms: percentile(sortedFirst, 50),
    firstByteP99Ms: percentile(sortedFirst, 99),
    contentSpreadP50Ms: percentile(
      [...spreads].sort((a, b) => a - b),
      50,
    ),
  };
}
