import type { NextFunction, Request, Response } from 'express';
import { MARKED_REQUEST_LIMIT, RECORDED_BODY_LIMIT_BYTES, REQUEST_LOG_LIMIT } from './limits.js';

/*
 * What a stand-in saw: counters, in-flight requests, client aborts (with how many tokens had
 * been sent, so tests can check what the gateway should bill), and a bounded request log.
 */

export interface AbortRecord {
  path: string;
  /** Tokens written to the client before it went away. */
  tokensSent: number;
  /** Tokens generated (sent or not) before it went away. */
  tokensGenerated: number;
  /** Epoch milliseconds when the disconnect was seen. */
  atMs: number;
}

export interface StandInStats {
  totalRequests: number;
  outstanding: number;
  byPath: Record<string, number>;
  aborted: number;
  lastAbort: AbortRecord | null;
}

export interface RecordedRequest {
  atMs: number;
  method: string;
  path: string;
  /** Header values; credentials are replaced by '[redacted]'. */
  headers: Record<string, string>;
  /** The parsed JSON body, or a summary for bodies that are not JSON or too large. */
  body: unknown;
}

/** Model calls seen for one request marker (`[[req:<id>]]` anywhere in a JSON body). */
export interface MarkedCalls {
  /** Requests that carried the marker. */
  started: number;
  /** Of those, answered to the end (a 2xx response fully written, not cut by either side). */
  completed: number;
}

/**
 * A test names its request with `[[req:<id>]]` in the prompt; the gateway forwards the prompt,
 * so the stand-in can count model calls per client request without any gateway header.
 */
const MARKER = /\[\[req:([A-Za-z0-9_.:-]{1,100})\]\]/;

function markerOf(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return undefined;
  return MARKER.exec(JSON.stringify(body))?.[1];
}

const MAX_DISTINCT_PATHS = 200;
/** Time a dropped connection gets to flush already written tokens before it is destroyed. */
const DROP_FLUSH_MS = 1_000;

/** One request's generation state, shared by the route and the disconnect watcher. */
export class Exchange {
  private readonly controller = new AbortController();
  tokensSent = 0;
  tokensGenerated = 0;
  /** Set by a drop-mid-stream fault: destroy the socket once this many tokens went out. */
  dropAfterTokens: number | null = null;
  droppedByServer = false;

  constructor(
    readonly path: string,
    private readonly res: Response,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops generation; called when the connection closes for any reason. */
  stop(): void {
    this.controller.abort();
  }

  /** Cuts the connection from the server side, as a crashing model server would. */
  drop(): void {
    this.droppedByServer = true;
    this.stop();
    const socket = this.res.socket;
    if (socket === null) return;
    // end() flushes what was already written (the tokens "sent") and then closes: the client
    // gets those tokens and a connection cut before the response is complete.
    socket.end();
    setTimeout(() => socket.destroy(), DROP_FLUSH_MS).unref();
  }
}

export function exchangeOf(res: Response): Exchange {
  const exchange = res.locals.exchange as Exchange | undefined;
  if (exchange === undefined) throw new Error('stand-in route used without the traffic middleware');
  return exchange;
}

const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'api-key',
  'x-api-key',
  'cookie',
]);

function redactedHeaders(req: Request): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[name] = SECRET_HEADERS.has(name) ? '[redacted]' : String(value);
  }
  return headers;
}

function recordedBody(req: Request): unknown {
  const bytes = Number(req.headers['content-length'] ?? 0);
  if (bytes > RECORDED_BODY_LIMIT_BYTES) return { omitted: 'body too large to record', bytes };
  if (Buffer.isBuffer(req.body)) {
    return { contentType: req.headers['content-type'] ?? null, bytes: req.body.length };
  }
  return req.body;
}

export class Traffic {
  private total = 0;
  private inFlight = 0;
  private abortedCount = 0;
  private last: AbortRecord | null = null;
  private readonly byPath = new Map<string, number>();
  private log: RecordedRequest[] = [];
  private readonly marked = new Map<string, MarkedCalls>();

  /** Middleware: counts the request and watches for the client going away. */
  readonly watch = (req: Request, res: Response, next: NextFunction): void => {
    const exchange = new Exchange(req.path, res);
    res.locals.exchange = exchange;
    this.total += 1;
    this.inFlight += 1;
    // Distinct paths are bounded: a scan of random URLs must not grow the map forever.
    const key =
      this.byPath.has(req.path) || this.byPath.size < MAX_DISTINCT_PATHS ? req.path : '(other)';
    this.byPath.set(key, (this.byPath.get(key) ?? 0) + 1);
    res.once('close', () => {
      this.inFlight -= 1;
      exchange.stop();
      if (res.writableFinished || exchange.droppedByServer) return;
      this.abortedCount += 1;
      this.last = {
        path: exchange.path,
        tokensSent: exchange.tokensSent,
        tokensGenerated: exchange.tokensGenerated,
        atMs: Date.now(),
      };
    });
    next();
  };

  /** Middleware, after body parsing: keeps the request for later assertions. */
  readonly record = (req: Request, res: Response, next: NextFunction): void => {
    this.log.push({
      atMs: Date.now(),
      method: req.method,
      path: req.path,
      headers: redactedHeaders(req),
      body: recordedBody(req),
    });
    if (this.log.length > REQUEST_LOG_LIMIT) this.log.shift();
    this.countMarked(req, res);
    next();
  };

  private countMarked(req: Request, res: Response): void {
    const marker = markerOf(req.body);
    if (marker === undefined) return;
    let calls = this.marked.get(marker);
    if (calls === undefined) {
      // Bounded like the request log: a runaway test must not grow this forever.
      if (this.marked.size >= MARKED_REQUEST_LIMIT) return;
      calls = { started: 0, completed: 0 };
      this.marked.set(marker, calls);
    }
    calls.started += 1;
    const counted = calls;
    res.once('close', () => {
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      if (ok && res.writableFinished && !exchangeOf(res).droppedByServer) counted.completed += 1;
    });
  }

  /** Model calls per request marker since the stand-in started. */
  markedCalls(): Record<string, MarkedCalls> {
    return Object.fromEntries([...this.marked].map(([marker, calls]) => [marker, { ...calls }]));
  }

  stats(): StandInStats {
    return {
      totalRequests: this.total,
      outstanding: this.inFlight,
      byPath: Object.fromEntries(this.byPath),
      aborted: this.abortedCount,
      lastAbort: this.last === null ? null : { ...this.last },
    };
  }

  requests(): RecordedRequest[] {
    return this.log.map((entry) => ({ ...entry }));
  }

  clearRequests(): void {
    this.log = [];
  }
}
