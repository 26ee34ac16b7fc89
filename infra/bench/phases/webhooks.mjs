/**
 * Webhook deliveries: async native jobs through edge (hold, queue, worker, fake upstream,
 * settlement, completion event) to the dispatcher, which POSTs to an HTTPS receiver on loopback
 * that trusts only the run's throwaway CA. Each job's prompt is a tag; the fake upstream echoes
 * it as the generated text and logs when it answered, so each delivery is matched to its
 * completion without reading any service's database. Two runs: first-attempt latency with
 * the dispatcher running, then its capacity on a backlog (see each run below).
 */
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { NATIVE_MODEL } from '../stack.mjs';
import { countError, createClient, summarize } from '../load.mjs';

const epochMs = () => performance.timeOrigin + performance.now();

/** An HTTPS receiver on 127.0.0.1 answering 204, recording when each tag arrived. */
export function startReceiver(certs) {
  const arrivals = new Map();
  const server = https.createServer(
    { key: certs.serverKeyPem, cert: certs.serverCertPem },
    (req, res) => {
      const parts = [];
      req.on('data', (part) => parts.push(part));
      req.on('end', () => {
        const at = epochMs();
        try {
          const tag = JSON.parse(Buffer.concat(parts).toString('utf8')).results?.[0]
            ?.generated_text;
          if (typeof tag === 'string' && !arrivals.has(tag)) arrivals.set(tag, at);
        } catch {
          // not a delivery body: ignored, and it shows as a missing delivery
        }
        res.writeHead(204).end();
      });
    },
  );
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: server.address().port,
        arrivals,
        close: () =>
          new Promise((done) => {
            server.close(done);
            server.closeAllConnections();
          }),
      }),
    );
  });
}

/** The fake upstream's {tag: answered at} from its log lines. */
const answeredAt = (upstream) =>
  new Map(
    upstream.logs.filter((line) => line.msg === 'answered').map((line) => [line.tag, line.atMs]),
  );

async function submitJobs(edgeUrl, apiKey, receiverPort, { jobs, connections, run }) {
  const client = createClient(
    {
      url: edgeUrl,
      path: `/v1/inference/${NATIVE_MODEL}`,
      headers: { authorization: `Bearer ${apiKey}` },
    },
    { maxSockets: connections },
  );
  const accepted = [];
  const errors = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < jobs) {
        const tag = `${run}-${next++}`;
        const answer = await client.send({
          input: tag,
          parameters: { max_new_tokens: 8 },
          webhook: `https://127.0.0.1:${receiverPort}/hook`,
        });
        if (answer.status === 200) accepted.push(tag);
        else countError(errors, answer);
      }
    }),
  );
  client.close();
  return { accepted, errors };
}

async function waitForDeliveries(receiver, accepted, waitS) {
  const deadline = Date.now() + waitS * 1000;
  while (Date.now() < deadline && accepted.some((tag) => !receiver.arrivals.has(tag))) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return accepted.filter((tag) => receiver.arrivals.has(tag));
}

const notDelivered = (accepted, delivered) =>
  delivered.length < accepted.length
    ? { 'not delivered in time': accepted.length - delivered.length }
    : {};

/**
 * Latency: jobs submitted by 10 clients as fast as the gateway takes them, the dispatcher
 * running; each delivery's first attempt is timed from when the upstream answered its job.
 */
async function latencyRun({ edgeUrl, apiKey, upstream, receiver, jobs, connections, waitS }) {
  const run = `whl${Date.now().toString(36)}`;
  const { accepted, errors } = await submitJobs(edgeUrl, apiKey, receiver.port, {
    jobs,
    connections,
    run,
  });
  const delivered = await waitForDeliveries(receiver, accepted, waitS);
  const answered = answeredAt(upstream);
  const latencies = delivered
    .filter((tag) => answered.has(tag))
    .map((tag) => receiver.arrivals.get(tag) - answered.get(tag));
  return {
    accepted: accepted.length,
    delivered: delivered.length,
    errors: { ...errors, ...notDelivered(accepted, delivered) },
    firstAttemptAfterCompletion: summarize(latencies),
  };
}

/**
 * Capacity: the dispatcher is paused (SIGSTOP) while the jobs run, so their completion events
 * wait in its queue; resumed, it takes, stores, signs and sends the whole backlog. The rate is
 * deliveries over the span from the first arrival to the last, with nothing else running.
 */
async function capacityRun({ edgeUrl, apiKey, receiver, jobs, connections, waitS, dispatcherPid }) {
  const run = `whc${Date.now().toString(36)}`;
  process.kill(dispatcherPid, 'SIGSTOP');
  let submitted;
  try {
    submitted = await submitJobs(edgeUrl, apiKey, receiver.port, { jobs, connections, run });
  } finally {
    process.kill(dispatcherPid, 'SIGCONT');
  }
  const { accepted, errors } = submitted;
  const delivered = await waitForDeliveries(receiver, accepted, waitS);
  const arrivals = delivered.map((tag) => receiver.arrivals.get(tag)).sort((a, b) => a - b);
  const spanS = arrivals.length > 1 ? (arrivals.at(-1) - arrivals[0]) / 1000 : NaN;
  return {
    accepted: accepted.length,
    delivered: delivered.length,
    errors: { ...errors, ...notDelivered(accepted, delivered) },
    deliveriesPerS: arrivals.length > 1 ? (arrivals.length - 1) / spanS : NaN,
  };
}

function sumCounts(...counts) {
  const sum = {};
  for (const count of counts) {
    for (const [key, n] of Object.entries(count)) sum[key] = (sum[key] ?? 0) + n;
  }
  return sum;
}

export async function webhookPhase(options) {
  // Unmeasured: the dispatcher's first deliveries pay for its cold start (first claims, the
  // account's signing secret created), which is not the latency of a dispatcher at work.
  const warmup =
    options.warmupJobs > 0 ? await latencyRun({ ...options, jobs: options.warmupJobs }) : undefined;
  const latency = await latencyRun(options);
  const capacity = await capacityRun(options);
  return {
    tickMs: options.tickMs,
    submitted: options.jobs * 2,
    accepted: latency.accepted + capacity.accepted,
    delivered: latency.delivered + capacity.delivered,
    errors: sumCounts(warmup?.errors ?? {}, latency.errors, capacity.errors),
    backlogDelivered: capacity.delivered,
    deliveriesPerS: capacity.deliveriesPerS,
    firstAttemptAfterCompletion: latency.firstAttemptAfterCompletion,
  };
}
