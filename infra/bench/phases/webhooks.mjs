/**
 * Webhook deliveries: async native jobs through edge (hold, queue, worker, fake upstream,
 * settlement, completion event) to the dispatcher, which POSTs to an HTTPS receiver on loopback
 * that trusts only the run's throwaway CA. Each job's prompt is a tag; the fake upstream echoes
 * it as the generated text and logs when it answered, so each delivery is matched to its
 * completion without reading any service's database.
 */
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { NATIVE_MODEL } from '../stack.mjs';
import { createClient, summarize } from '../load.mjs';

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

async function submitJobs(edgeUrl, apiKey, receiverPort, { jobs, connections }) {
  const client = createClient(
    {
      url: edgeUrl,
      path: `/v1/inference/${NATIVE_MODEL}`,
      headers: { authorization: `Bearer ${apiKey}` },
    },
    { maxSockets: connections },
  );
  const run = `wh${Date.now().toString(36)}`;
  const accepted = [];
  const errors = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < jobs) {
        const tag = `${run}-${next++}`;
        const { status } = await client.send({
          input: tag,
          parameters: { max_new_tokens: 8 },
          webhook: `https://127.0.0.1:${receiverPort}/hook`,
        });
        if (status === 200) accepted.push(tag);
        else errors[`HTTP ${status}`] = (errors[`HTTP ${status}`] ?? 0) + 1;
      }
    }),
  );
  client.close();
  return { accepted, errors };
}

export async function webhookPhase({
  edgeUrl,
  apiKey,
  upstream,
  receiver,
  jobs,
  connections,
  waitS,
  tickMs,
}) {
  const { accepted, errors } = await submitJobs(edgeUrl, apiKey, receiver.port, {
    jobs,
    connections,
  });
  const deadline = Date.now() + waitS * 1000;
  while (Date.now() < deadline && accepted.some((tag) => !receiver.arrivals.has(tag))) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const answered = answeredAt(upstream);
  const delivered = accepted.filter((tag) => receiver.arrivals.has(tag));
  const latencies = delivered
    .filter((tag) => answered.has(tag))
    .map((tag) => receiver.arrivals.get(tag) - answered.get(tag));
  // The rate of the burst that follows the last completion: deliveries a tick sent while jobs
  // were still being submitted would otherwise stretch the window by the submission time.
  const lastCompletion = delivered.reduce((last, tag) => Math.max(last, answered.get(tag) ?? 0), 0);
  const burst = delivered
    .map((tag) => receiver.arrivals.get(tag))
    .filter((at) => at >= lastCompletion)
    .sort((a, b) => a - b);
  const spanS = burst.length > 1 ? (burst.at(-1) - burst[0]) / 1000 : NaN;
  return {
    tickMs,
    submitted: jobs,
    accepted: accepted.length,
    delivered: delivered.length,
    errors: {
      ...errors,
      ...(delivered.length < accepted.length
        ? { 'not delivered in time': accepted.length - delivered.length }
        : {}),
    },
    burstDeliveries: burst.length,
    deliveriesPerS: burst.length > 1 ? (burst.length - 1) / spanS : NaN,
    firstAttemptAfterCompletion: summarize(latencies),
  };
}
