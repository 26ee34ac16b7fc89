import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  makeEnvelope,
  parseEnvelope,
  WORKER_JOBS_PATH,
  WORKER_REPLIES_CONTENT_TYPE,
  type InferenceJobPayload,
  type InferenceReplyPayload,
} from '@gateway/contracts';
import { createLogger } from '@gateway/observability';
import { silentStream } from '../testing/silent-log.suite.js';
import { DirectJobs, type DirectJob, type NotTaken } from './direct-jobs.js';

/*
 * Edge's side of handing a job to a worker over HTTP (ADR 0072), against a loopback server that
 * answers as a worker would: which answers mean "not taken" (the queue gets the job), and how
 * the replies of a taken job reach its listener.
 */

const log = createLogger({ service: 'edge', destination: silentStream });
const TOKEN = 'e'.repeat(64);

type Behaviour = (req: IncomingMessage, res: ServerResponse, job: InferenceJobPayload) => void;

let server: Server;
let baseUrl: string;
let behaviour: Behaviour;
const seen: { token: string | undefined; acceptBy: number; job: InferenceJobPayload }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const job = parseEnvelope('inference.job', Buffer.concat(chunks)).payload;
      seen.push({
        token: req.headers['x-internal-token'] as string | undefined,
        acceptBy: Number(req.headers['x-accept-by-ms']),
        job,
      });
      if (req.url !== WORKER_JOBS_PATH) {
        res.writeHead(404).end();
        return;
      }
      behaviour(req, res, job);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const direct = (urls = [baseUrl], acceptTimeoutMs = 2_000) =>
  new DirectJobs({ urls, token: TOKEN, acceptTimeoutMs, connections: 4, logger: log });

let jobCount = 0;
const job = (): InferenceJobPayload => ({
  jobId: `chatcmpl-${(jobCount += 1)}`,
  accountId: 'usr_1',
  holdId: `chatcmpl-${jobCount}`,
  model: 'acme/chat',
  modelKind: 'chat',
  endpoint: 'chat.completions',
  serviceTier: 'default',
  stream: true,
  request: { model: 'acme/chat', messages: [] },
  deadlineAtMs: Date.now() + 60_000,
});

const line = (reply: Omit<InferenceReplyPayload, 'attemptId'>) =>
  `${JSON.stringify(makeEnvelope('inference.reply', { ...reply, attemptId: 'a1' }))}\n`;

function recorder() {
  const replies: InferenceReplyPayload[] = [];
  const lost: (string | undefined)[] = [];
  return {
    replies,
    lost,
    push: (reply: InferenceReplyPayload) => void replies.push(reply),
    replyPathLost: (how?: string) => void lost.push(how),
  };
}

function taking(offered: DirectJob | NotTaken): DirectJob {
  if (typeof offered === 'string') throw new Error(`not taken: ${offered}`);
  return offered;
}

const until = async (condition: () => boolean) => {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 3_000) throw new Error('condition not met in 3 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('DirectJobs', () => {
  it('hands the job over with its credential and pushes each reply line, split anywhere, in order', async () => {
    const calls = direct();
    behaviour = (_req, res, { jobId }) => {
      res.writeHead(200, { 'content-type': WORKER_REPLIES_CONTENT_TYPE });
      const text =
        line({ jobId, seq: 0, type: 'chunk', data: { text: 'é' } }) +
        line({ jobId, seq: 1, type: 'final', data: {}, costMicroDzd: '12' });
      // Split inside the two-byte character and between the lines.
      const bytes = Buffer.from(text);
      const cut = bytes.indexOf(0xc3) + 1;
      res.write(bytes.subarray(0, cut));
      setTimeout(() => res.end(bytes.subarray(cut)), 20);
    };
    const listener = recorder();
    const sent = job();
    expect(typeof (await calls.offer(sent, listener))).toBe('object');
    await until(() => listener.replies.length === 2);
    expect(listener.replies.map((reply) => [reply.seq, reply.type])).toEqual([
      [0, 'chunk'],
      [1, 'final'],
    ]);
    expect(listener.replies[0]!.data).toEqual({ text: 'é' });
    expect(seen.at(-1)).toMatchObject({ token: TOKEN, job: sent });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(listener.lost).toEqual([]);
    await calls.close();
  });

  it('keeps handing jobs over to a worker that ends each connection with its answer', async () => {
    // A worker closes a connection after its jobs per connection (DIRECT_JOBS_PER_CONNECTION).
    const calls = direct();
    const sockets = new Set<Socket>();
    behaviour = (req, res, { jobId }) => {
      sockets.add(req.socket);
      res.writeHead(200, { 'content-type': WORKER_REPLIES_CONTENT_TYPE, connection: 'close' });
      res.flushHeaders();
      setTimeout(() => res.end(line({ jobId, seq: 0, type: 'final', data: {} })), 5);
    };
    for (let i = 0; i < 5; i += 1) {
      const listener = recorder();
      taking(await calls.offer(job(), listener));
      await until(() => listener.replies.length === 1);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(listener.lost).toEqual([]);
    }
    expect(sockets.size).toBe(5);
    await calls.close();
  });

  it('gives the slot back when a job cannot be sent at all', async () => {
    const calls = new DirectJobs({
      urls: [baseUrl],
      token: TOKEN,
      acceptTimeoutMs: 2_000,
      connections: 1,
      logger: log,
    });
    // A value JSON cannot write: the envelope throws before any call.
    const unsendable = { ...job(), request: { model: 'acme/chat', n: 1n } } as InferenceJobPayload;
    await expect(calls.offer(unsendable, recorder())).rejects.toThrow(TypeError);
    behaviour = (_req, res) => res.writeHead(503).end('{}');
    // With the one slot leaked, this job would be refused before reaching the worker.
    const before = seen.length;
    expect(await calls.offer(job(), recorder())).toBe('refused');
    expect(seen.length).toBe(before + 1);
    await calls.close();
  });

  it('leaves a job the worker refused (any answer but 200) to the queue', async () => {
    const calls = direct();
    for (const status of [503, 401, 404]) {
      behaviour = (_req, res) => res.writeHead(status).end('{}');
      expect(await calls.offer(job(), recorder())).toBe('refused');
    }
    await calls.close();
  });

  it('leaves a job to the queue once the worker’s time to take it and a margin passed', async () => {
    const calls = direct([baseUrl], 200);
    behaviour = () => {}; // a stopped worker: the request sits unread, nothing answers
    const sentAtMs = Date.now();
    // The worker may read it yet: its queued copy is a redelivery.
    expect(await calls.offer(job(), recorder())).toBe('unknown');
    const waitedMs = Date.now() - sentAtMs;
    // The worker refuses a job it reads after `acceptBy`; edge waits a second more.
    const { acceptBy } = seen.at(-1)!;
    expect(acceptBy).toBeGreaterThanOrEqual(sentAtMs + 200);
    expect(acceptBy).toBeLessThan(sentAtMs + 400);
    expect(waitedMs).toBeGreaterThanOrEqual(1_150);
    expect(waitedMs).toBeLessThan(3_000);
    await calls.close();
  });

  it('leaves a job to the queue when no worker listens there', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const calls = direct([`http://127.0.0.1:${port}`]);
    expect(await calls.offer(job(), recorder())).toBe('unknown');
    // That worker is left alone a while: its next jobs go to the queue without a call.
    const before = seen.length;
    expect(await calls.offer(job(), recorder())).toBe('refused');
    expect(seen.length).toBe(before);
    await calls.close();
  });

  it('reports the reply path lost when the answer breaks off before the last reply', async () => {
    const calls = direct();
    behaviour = (_req, res, { jobId }) => {
      res.writeHead(200, { 'content-type': WORKER_REPLIES_CONTENT_TYPE });
      res.write(line({ jobId, seq: 0, type: 'chunk', data: {} }));
      setTimeout(() => res.destroy(), 20);
    };
    const listener = recorder();
    expect(typeof (await calls.offer(job(), listener))).toBe('object');
    await until(() => listener.lost.length === 1);
    expect(listener.lost).toEqual(['lost on its way from the worker']);
    expect(listener.replies).toHaveLength(1);
    await calls.close();
  });

  it('takes a 200 that carries no reply stream as a lost run, never as a refusal', async () => {
    const calls = direct();
    behaviour = (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
    const listener = recorder();
    expect(typeof (await calls.offer(job(), listener))).toBe('object');
    await until(() => listener.lost.length === 1);
    expect(listener.replies).toEqual([]);
    await calls.close();
  });

  it('closes the call when edge abandons the job before its last reply, not after it', async () => {
    const calls = direct();
    let closedEarly = false;
    behaviour = (req, res, { jobId }) => {
      res.writeHead(200, { 'content-type': WORKER_REPLIES_CONTENT_TYPE });
      res.write(line({ jobId, seq: 0, type: 'chunk', data: {} }));
      res.on('close', () => {
        closedEarly = !res.writableEnded;
      });
      void req;
    };
    const listener = recorder();
    const taken = taking(await calls.offer(job(), listener));
    await until(() => listener.replies.length === 1);
    taken.abandon();
    await until(() => closedEarly);

    // After the last reply, abandoning closes nothing: the connection stays open for the next
    // job (a socket count would depend on timing; an aborted call destroys its socket).
    const finishedSockets: Socket[] = [];
    behaviour = (req, res, { jobId }) => {
      finishedSockets.push(req.socket);
      res.writeHead(200, { 'content-type': WORKER_REPLIES_CONTENT_TYPE });
      // The answer's end comes after its last reply was read: abandoned in between, it is
      // still not cut.
      res.write(line({ jobId, seq: 0, type: 'final', data: {} }));
      setTimeout(() => res.end(), 50);
    };
    for (let round = 0; round < 3; round += 1) {
      const done = recorder();
      const finished = taking(await calls.offer(job(), done));
      await until(() => done.replies.length === 1);
      finished.abandon();
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(finishedSockets).toHaveLength(3);
    expect(finishedSockets.filter((socket) => socket.destroyed)).toEqual([]);
    await calls.close();
  });
});
