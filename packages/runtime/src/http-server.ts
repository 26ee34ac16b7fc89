import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export interface RunningServer {
  readonly server: Server;
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish for up to drainMs, then cuts the rest. */
  close(drainMs: number): Promise<void>;
}

/** Limits on every connection: slow or idle clients cannot hold sockets forever. */
const HEADERS_TIMEOUT_MS = 15_000;
const REQUEST_TIMEOUT_MS = 120_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;

export async function listen(app: Express, host: string, port: number): Promise<RunningServer> {
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(s)));
  });
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
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
