import net from 'node:net';

export interface TcpBalancer {
  readonly port: number;
  /** Connections open through it now. */
  readonly openConnections: number;
  /**
   * Sends new connections to these upstreams from now on and cuts the open ones, as a
   * Kubernetes Service does when its endpoint moves (a database's primary after a failover).
   */
  repoint(upstreamPorts: readonly number[]): void;
  close(): Promise<void>;
}

/** Bound on reaching one upstream before the next is tried. */
const CONNECT_TIMEOUT_MS = 2_000;

/**
 * A loopback TCP balancer: each accepted connection is piped to the next upstream (round robin)
 * that accepts it, the others tried in turn; when either side closes, so does the other. It
 * stands in for what carries a client to a broker cluster in production (a Kubernetes Service,
 * HAProxy), so that tests can kill the node a client is on and watch it reconnect to another.
 */
export async function startTcpBalancer(initialPorts: readonly number[]): Promise<TcpBalancer> {
  let upstreamPorts = [...initialPorts];
  let next = 0;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    track(client);
    client.pause();
    client.on('error', () => client.destroy());
    const start = next;
    next = (next + 1) % upstreamPorts.length;
    const attempt = (tried: number) => {
      if (tried === upstreamPorts.length || client.destroyed) {
        client.destroy();
        return;
      }
      const port = upstreamPorts[(start + tried) % upstreamPorts.length]!;
      const upstream = net.connect({ host: '127.0.0.1', port });
      let connected = false;
      upstream.setTimeout(CONNECT_TIMEOUT_MS, () => upstream.destroy(new Error('timeout')));
      upstream.once('error', () => {
        if (!connected) attempt(tried + 1);
      });
      upstream.once('connect', () => {
        connected = true;
        upstream.setTimeout(0);
        track(upstream);
        upstream.setNoDelay(true);
        client.setNoDelay(true);
        upstream.on('error', () => client.destroy());
        upstream.once('close', () => client.destroy());
        client.once('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    attempt(0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    get openConnections() {
      return sockets.size;
    },
    repoint: (ports) => {
      upstreamPorts = [...ports];
      next = 0;
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
