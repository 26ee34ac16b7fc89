import net from 'node:net';
import { freeLoopbackPort } from './ports.js';

describe('freeLoopbackPort', () => {
  it('hands out distinct bindable ports below the kernel ephemeral range', async () => {
    const ports = await Promise.all(Array.from({ length: 40 }, () => freeLoopbackPort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(32_768);
    }
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(ports[0], '127.0.0.1', resolve));
    await new Promise((resolve) => server.close(resolve));
  });
});
