import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { GatewayError, toErrorBody, type ErrorCode } from '@gateway/contracts';
import { isExpressApp, messageClassesFor, type MessagePrototypes } from './express-messages.js';

export interface RunningServer {
  readonly server: Server;
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish for up to drainMs, then cuts the rest. */
  close(drainMs: number): Promise<void>;
}

/**
 * Limits on every connection: slow or idle clients cannot hold sockets forever. A request's
 * headers must arrive within HEADERS_TIMEOUT_MS and the whole request (body included) within
 * REQUEST_TIMEOUT_MS; a body that stops flowing is cut sooner (`bodyIdleTimeout`, app.ts). Node
 * checks these every CONNECTIONS_CHECK_INTERVAL_MS (30 s by default, which let a stalled body
 * live 138 s).
 */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 60_000;
const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Request line and headers together (Node's default); beyond it: 431. */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * What Node's HTTP parser refuses before any route runs (a bad request line, duplicate or
 * conflicting Content-Length, headers too large, a request too slow) would get a bare status
 * line from Node. It gets the documented error shape instead.
 */
function clientErrorCode(code: string | undefined): ErrorCode {
  if (code === 'HPE_HEADER_OVERFLOW') return 'request_header_fields_too_large';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  return 'invalid_request_body';
}

const CLIENT_ERROR_MESSAGES: Partial<Record<ErrorCode, string>> = {
  request_header_fields_too_large: `Request line and headers exceed ${MAX_HEADER_BYTES} bytes`,
  request_timeout: 'The request did not arrive in time',
  invalid_request_body: 'Malformed HTTP request',
};

function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const code = clientErrorCode(error.code);
    const gatewayError = new GatewayError(code, CLIENT_ERROR_MESSAGES[code] ?? 'Bad request');
    const body = JSON.stringify(toErrorBody(gatewayError));
    socket.write(
      `HTTP/1.1 ${gatewayError.status} ${code}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

export interface ListenOptions {
  /**
   * Requests one connection may carry; the last gets `Connection: close`, so its client
   * connects anew (Node's `maxRequestsPerSocket`; a request sent on it after that is answered
   * 503). Unset: no limit.
   */
  maxRequestsPerConnection?: number;
  /**
   * The Express app whose prototypes the server's messages get (see express-messages.ts), when
   * `app` is a listener in front of it; when `app` is the Express app itself, it is found.
   */
  expressApp?: MessagePrototypes;
}

/** `app`: an Express app, or a listener that hands it what it does not serve itself. */
export async function listen(
  app: RequestListener,
  host: string,
  port: number,
  options: ListenOptions = {},
): Promise<RunningServer> {
  const expressApp = options.expressApp ?? (isExpressApp(app) ? app : undefined);
  const server = createServer(
    {
      ...(expressApp ? messageClassesFor(expressApp) : {}),
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    app,
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  if (options.maxRequestsPerConnection !== undefined) {
    server.maxRequestsPerSocket = options.maxRequestsPerConnection;
  }
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: (drainMs) =>
      new Promise<void>((resolve) => {
        const cut = setTimeout(() => server.closeAllConnections(), drainMs);
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
