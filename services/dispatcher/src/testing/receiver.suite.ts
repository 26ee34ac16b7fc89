import { createServer as createHttpsServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RECEIVER_HOST, type TestCertificates } from './test-ca.suite.js';

export interface ReceivedRequest {
  atMs: number;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw bytes, as a verifier must see them. */
  body: Buffer;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** Answer only after this long (the dispatcher's timeout may cut it first). */
  delayMs?: number;
  body?: string;
}

/** Decides the reply to the n-th request (0-based) for a path. */
export type Responder = (request: ReceivedRequest, index: number) => Reply;

export interface Receiver {
  port: number;
  /** `https://receiver.test:<port><path>` (tests resolve the name to 127.0.0.1). */
  url(path?: string): string;
  requests: ReceivedRequest[];
  requestsTo(path: string): ReceivedRequest[];
  setResponder(path: string, responder: Responder): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

function answer(res: ServerResponse, reply: Reply): void {
  const send = () => {
    if (res.destroyed) return;
    res.writeHead(reply.status, reply.headers ?? {});
    res.end(reply.body ?? '');
  };
  if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
  else send();
}

/** An HTTPS webhook receiver on 127.0.0.1 with the test CA's certificate; 204 by default. */
export async function startReceiver(certs: TestCertificates): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const responders = new Map<string, Responder>();
  const server: Server = createHttpsServer(
    { key: certs.serverKeyPem, cert: certs.serverCertPem },
    (req, res) => {
      void readBody(req).then((body) => {
        const path = req.url ?? '/';
        const request = { atMs: Date.now(), path, headers: req.headers, body };
        requests.push(request);
        const index = requests.filter((r) => r.path === path).length - 1;
        answer(res, (responders.get(path) ?? (() => ({ status: 204 })))(request, index));
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path = '/hook') => `https://${RECEIVER_HOST}:${port}${path}`,
    requests,
    requestsTo: (path) => requests.filter((r) => r.path === path),
    setResponder: (path, responder) => responders.set(path, responder),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
