import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express, NextFunction, Request, Response } from 'express';
import express, { Router } from 'express';
import { StandInHttpError, sendError, toHttpError } from './errors.js';
import { FaultState, faultProblem, type RequestFault, type StandInFault } from './faults.js';
import { Traffic, exchangeOf } from './traffic.js';

/*
 * The plumbing both stand-ins share: an Express app that names itself, the control routes
 * under /_stand-in, fault injection, error mapping, and a loopback-only listener whose close()
 * really cuts every connection (so a test can turn a stand-in into a refused connection).
 */

export interface StandInKit {
  app: Express;
  traffic: Traffic;
  faults: FaultState;
}

function controlRoutes(traffic: Traffic, faults: FaultState): Router {
  const router = Router();
  router.use(express.json({ limit: 16 * 1024 }));
  router.post('/fault', (req, res) => {
    const problem = faultProblem(req.body);
    if (problem !== null) throw new StandInHttpError(400, `invalid stand-in fault: ${problem}`);
    faults.set(req.body as StandInFault);
    res.status(204).end();
  });
  router.delete('/fault', (_req, res) => {
    faults.clear();
    res.status(204).end();
  });
  router.get('/fault', (_req, res) => void res.json({ fault: faults.current() }));
  router.get('/stats', (_req, res) => void res.json(traffic.stats()));
  router.get('/requests', (_req, res) => void res.json({ requests: traffic.requests() }));
  router.delete('/requests', (_req, res) => {
    traffic.clearRequests();
    res.status(204).end();
  });
  router.get('/marked', (_req, res) => void res.json({ marked: traffic.markedCalls() }));
  return router;
}

export function createStandInKit(service: string): StandInKit {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const traffic = new Traffic();
  const faults = new FaultState();
  // Every answer says it comes from a stand-in, so nobody mistakes one for a real server.
  app.use((_req, res, next) => {
    res.setHeader('x-stand-in', service);
    next();
  });
  app.use('/_stand-in', controlRoutes(traffic, faults));
  return { app, traffic, faults };
}

function sendFaultStatus(req: Request, res: Response, status: number, retryAfterS: number) {
  if (status === 429) {
    res.setHeader('retry-after', String(retryAfterS));
    sendError(
      req,
      res,
      new StandInHttpError(
        429,
        'Rate limit reached (stand-in fault).',
        null,
        'rate_limit_exceeded',
        'requests',
      ),
    );
    return;
  }
  const serverSide = status >= 500;
  const message = serverSide
    ? 'The server had an error while processing your request (stand-in fault).'
    : 'The request was refused (stand-in fault).';
  sendError(
    req,
    res,
    new StandInHttpError(
      status,
      message,
      null,
      null,
      serverSide ? 'server_error' : 'invalid_request_error',
    ),
  );
}

/** 200 with a body no client can parse: HTML where JSON was promised, or a broken event. */
function sendGarbage(req: Request, res: Response) {
  const streaming =
    req.path === '/generate_stream' ||
    (req.body as { stream?: unknown } | undefined)?.stream === true;
  if (streaming) {
    res
      .status(200)
      .type('text/event-stream')
      .end('data: {"choices": [{"delta": <stand-in garbage>\n\n');
    return;
  }
  res
    .status(200)
    .type('application/json')
    .end('<html><body>502 Bad Gateway (stand-in garbage)</body></html>');
}

/** Middleware applying the current fault; generationPaths can drop mid-stream, others drop at once. */
export function faultMiddleware(faults: FaultState, generationPaths: ReadonlySet<string>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const fault: RequestFault | null = faults.take();
    if (fault === null) return next();
    switch (fault.kind) {
      case 'status':
        return sendFaultStatus(req, res, fault.status, fault.retryAfterS ?? 1);
      case 'timeout':
        return; // Hold the request: it ends when the client gives up or the stand-in closes.
      case 'garbage':
        return sendGarbage(req, res);
      case 'drop-mid-stream':
        if (!generationPaths.has(req.path)) return exchangeOf(res).drop();
        exchangeOf(res).dropAfterTokens = fault.afterTokens;
        return next();
    }
  };
}

/** Unknown routes and errors, answered in the protocol of the path. */
export function finishApp(app: Express): void {
  app.use((req: Request, res: Response) => {
    sendError(req, res, new StandInHttpError(404, `Invalid URL (${req.method} ${req.path})`));
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      // A stream already started cannot carry a status; cut it like a crashing server.
      exchangeOf(res).drop();
      return;
    }
    sendError(req, res, toHttpError(error));
  });
}

const LOOPBACK_HOST = /^(127(\.\d{1,3}){3}|localhost|::1)$/;

export interface Listening {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Listens on a loopback address only: stand-ins must never be reachable from outside. */
export async function listenLoopback(app: Express, host: string, port: number): Promise<Listening> {
  if (!LOOPBACK_HOST.test(host)) throw new Error(`stand-ins listen on loopback only, not ${host}`);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(s)));
  });
  server.headersTimeout = 15_000;
  server.keepAliveTimeout = 5_000;
  const bound = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${bound}`,
    port: bound,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Held (timeout fault), streaming and idle keep-alive connections all go now.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
