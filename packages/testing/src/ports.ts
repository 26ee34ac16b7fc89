import net from 'node:net';

/** Asks the kernel for a free TCP port on loopback. Small race window; fine for tests. */
export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the allocated port'));
      });
    });
  });
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
 * block of fixed ports (local mode). Chosen below the kernel's ephemeral range (32768–60999 on
 * Linux), where outgoing connections of every other process would otherwise take them.
 */
export async function freeLoopbackPortBlock(offsets: readonly number[]): Promise<number> {
  const span = Math.max(...offsets) + 1;
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = 20_000 + Math.floor(Math.random() * (12_000 - span));
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
