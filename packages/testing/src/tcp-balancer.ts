import net from 'node:net';

export interface TcpBalancer {
  readonly port: number;
  /** Connections open through it now. */
  readonly openConnections: number;
  /** Where new connections go now (a copy). */
  readonly upstreamPorts: readonly number[];
  /**
   * Sends new connections to these upstreams from now on and cuts the open ones, as a
   * Kubernetes Service does when its endpoint moves (a database's primary after a failover).
   */
  repoint(upstreamPorts: readonly number[]): void;
  /**
   * Destroys every open connection at once, both sides, and keeps the upstreams: a network blip
   * or a restarted load balancer, which clients must survive by reconnecting.
   */
  cut(): void;
  /**
   * For `durationMs`, moves no byte either way on open connections and accepts new ones without
   * reaching an upstream; then everything flows again, nothing lost or reordered. A partition
   * that heals, for heartbeats and timeouts to notice (or not). A stall while stalled lasts until
   * the later of the two ends.
   */
  stall(durationMs: number): void;
  /**
   * From now on delivers each chunk, either way, `latencyMs` after it arrives (0: at once), still
   * in order when the latency changes: a slow or distant link, for deadlines and pacing.
   */
  setLatencyMs(latencyMs: number): void;
  close(): Promise<void>;
}

/** Bound on reaching one upstream before the next is tried. */
const CONNECT_TIMEOUT_MS = 2_000;

/**
 * One direction of a connection. A forwarder of our own rather than `pipe()`, so that a chunk can
 * wait (latency, stall) without overtaking or being overtaken.
 */
interface Leg {
  readonly from: net.Socket;
  readonly to: net.Socket;
  /** What `from` sent, in order, each with when to write it; `null` stands for its close. */
  readonly queue: { chunk: Buffer | null; due: number }[];
  /** The last chunk's due time: no later chunk is due before it, whatever the latency became. */
  lastDue: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** `to` asked us to wait (`write` returned false): `from` stays paused until `drain`. */
  draining: boolean;
}

/**
 * A loopback TCP balancer: each accepted connection is forwarded to the next upstream (round
 * robin) that accepts it, the others tried in turn; when either side closes, so does the other.
 * It stands in for what carries a client to a broker cluster in production (a Kubernetes
 * Service, HAProxy), so that tests can kill the node a client is on and watch it reconnect to
 * another, or play the network's faults on the path (`cut`, `stall`, `setLatencyMs`).
 */
export async function startTcpBalancer(initialPorts: readonly number[]): Promise<TcpBalancer> {
  let upstreamPorts = [...initialPorts];
  let next = 0;
  let latencyMs = 0;
  /** Set while stalled; fires at the stall's end. */
  let stallTimer: ReturnType<typeof setTimeout> | undefined;
  let stallEnd = 0;
  /** Connections accepted during a stall, to connect to an upstream when it ends. */
  let waiting: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  const legs = new Set<Leg>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  /** Writes what is due (unless stalled), waits for the rest, and pauses `from` if it must. */
  const pump = (leg: Leg) => {
    clearTimeout(leg.timer);
    leg.timer = undefined;
    if (leg.to.destroyed) return;
    if (stallTimer) {
      leg.from.pause();
      return;
    }
    const now = Date.now();
    while (leg.queue[0] && leg.queue[0].due <= now) {
      const { chunk } = leg.queue.shift()!;
      if (chunk === null) leg.to.destroySoon();
      else if (!leg.to.write(chunk)) leg.draining = true;
    }
    if (leg.queue[0]) leg.timer = setTimeout(() => pump(leg), leg.queue[0].due - now);
    if (leg.draining) leg.from.pause();
    else leg.from.resume();
  };

  const forward = (from: net.Socket, to: net.Socket) => {
    const leg: Leg = { from, to, queue: [], lastDue: 0, timer: undefined, draining: false };
    legs.add(leg);
    const enqueue = (chunk: Buffer | null) => {
      leg.lastDue = Math.max(Date.now() + latencyMs, leg.lastDue);
      leg.queue.push({ chunk, due: leg.lastDue });
      if (!leg.timer) pump(leg);
    };
    from.on('data', (chunk: Buffer) => enqueue(chunk));
    from.once('close', () => enqueue(null));
    to.on('drain', () => {
      leg.draining = false;
      pump(leg);
    });
    to.once('close', () => {
      clearTimeout(leg.timer);
      legs.delete(leg);
    });
    pump(leg);
  };

  const connect = (client: net.Socket) => {
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
        if (client.destroyed) {
          upstream.destroy();
          return;
        }
        track(upstream);
        upstream.setNoDelay(true);
        client.setNoDelay(true);
        upstream.on('error', () => upstream.destroy());
        forward(client, upstream);
        forward(upstream, client);
      });
    };
    attempt(0);
  };

  const server = net.createServer((client) => {
    track(client);
    client.pause();
    client.on('error', () => client.destroy());
    if (stallTimer) waiting.push(() => connect(client));
    else connect(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });

  const endStall = () => {
    stallTimer = undefined;
    for (const leg of legs) pump(leg);
    const ready = waiting;
    waiting = [];
    for (const connectOne of ready) connectOne();
  };
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    get openConnections() {
      return sockets.size;
    },
    get upstreamPorts() {
      return [...upstreamPorts];
    },
    repoint: (ports) => {
      upstreamPorts = [...ports];
      next = 0;
      cut();
    },
    cut,
    stall: (durationMs) => {
      stallEnd = Math.max(stallEnd, Date.now() + durationMs);
      clearTimeout(stallTimer);
      stallTimer = setTimeout(endStall, stallEnd - Date.now());
      for (const leg of legs) pump(leg);
    },
    setLatencyMs: (ms) => {
      latencyMs = Math.max(0, ms);
    },
    close: async () => {
      clearTimeout(stallTimer);
      stallTimer = undefined;
      waiting = [];
      for (const leg of legs) clearTimeout(leg.timer);
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
