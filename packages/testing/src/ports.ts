import net from 'node:net';

// Linux hands out ephemeral ports (outgoing connections, listen(0)) from 32768–60999. A port taken
// from there and bound seconds later (a container, PostgreSQL after initdb, RabbitMQ after its
// boot) can meanwhile become the local end of some other process's outgoing connection: an edge
// container once failed with EADDRINUSE that way. Test ports come from below that range instead.
const FIRST_PORT = 20_000;
const PORT_COUNT = 12_000;
const handedOut = new Set<number>();

/**
 * A loopback TCP port that is free now, below the ephemeral range and never handed out before by
 * this process. Another process could still take it before the caller binds; tests accept that
 * small window (1 in 12,000 per overlapping pick).
 */
export async function freeLoopbackPort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = FIRST_PORT + Math.floor(Math.random() * PORT_COUNT);
    if (handedOut.has(port) || !(await canBind(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('no free loopback port found below the ephemeral range');
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A base port such that `base + offset` is free for every offset, for a program that takes a
 * block of fixed ports (local mode), below the ephemeral range like freeLoopbackPort.
 */
export async function freeLoopbackPortBlock(offsets: readonly number[]): Promise<number> {
  const span = Math.max(...offsets) + 1;
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = FIRST_PORT + Math.floor(Math.random() * (PORT_COUNT - span));
    const free = await Promise.all(offsets.map((offset) => canBind(base + offset)));
    if (free.every(Boolean)) return base;
  }
  throw new Error('no free block of loopback ports found');
}

/** Resolves once something accepts TCP connections on 127.0.0.1:port, or rejects at the deadline. */
export async function waitForTcp(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline)
      throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
