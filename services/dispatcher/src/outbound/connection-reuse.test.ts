import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RECEIVER_HOST, createTestCertificates, type TestCertificates } from '@gateway/testing';
import { testLookup } from '../testing/harness.suite.js';
import { createWebhookClient, type WebhookClient } from './webhook-client.js';

/**
 * An HTTPS receiver that counts its TLS connections. `killNthOnConnection`: the n-th request
 * (1-based) on any connection is answered by destroying that connection, which is what a client
 * sees when it reuses a socket the receiver already closed while it was idle.
 */
async function startCountingReceiver(certs: TestCertificates, killNthOnConnection?: number) {
  const stats = { connections: 0, answered: 0 };
  const requestsOn = new WeakMap<Socket, number>();
  const server = https.createServer(
    { key: certs.serverKeyPem, cert: certs.serverCertPem },
    (req, res) => {
      const count = (requestsOn.get(req.socket) ?? 0) + 1;
      requestsOn.set(req.socket, count);
      req.resume();
      req.once('end', () => {
        if (count === killNthOnConnection) return req.socket.destroy();
        stats.answered += 1;
        res.writeHead(204).end();
      });
    },
  );
  server.on('secureConnection', () => (stats.connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    stats,
    url: `https://${RECEIVER_HOST}:${port}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('webhook client connections', () => {
  let certs: TestCertificates;
  let client: WebhookClient;

  beforeAll(() => {
    certs = createTestCertificates();
    client = createWebhookClient({
      timeoutMs: 2_000,
      maxResponseBodyBytes: 1024,
      policy: { allowInsecureLoopback: true },
      extraCaPem: certs.caPem,
      lookup: testLookup(),
    });
  });

  afterAll(() => {
    client.close();
    certs.remove();
  });

  const post = (url: string) => client.post(url, {}, Buffer.from('{"ok":true}'));

  it('sends consecutive deliveries to one receiver over one kept-alive TLS connection', async () => {
    const receiver = await startCountingReceiver(certs);
    try {
      for (let i = 0; i < 5; i += 1) {
        expect(await post(receiver.url)).toMatchObject({ statusCode: 204, failure: null });
      }
      expect(receiver.stats).toEqual({ connections: 1, answered: 5 });
    } finally {
      await receiver.close();
    }
  });

  it('resends on a new connection when a reused one turns out closed, instead of failing', async () => {
    const receiver = await startCountingReceiver(certs, 2);
    try {
      expect(await post(receiver.url)).toMatchObject({ statusCode: 204, failure: null });
      // The pooled connection dies under the second request: sent again on a fresh one.
      expect(await post(receiver.url)).toMatchObject({ statusCode: 204, failure: null });
      expect(receiver.stats).toEqual({ connections: 2, answered: 2 });
    } finally {
      await receiver.close();
    }
  });

  it('a connection that dies under its first request is a network failure (no resend)', async () => {
    const receiver = await startCountingReceiver(certs, 1);
    try {
      expect(await post(receiver.url)).toMatchObject({ statusCode: null, failure: 'network' });
      expect(receiver.stats).toEqual({ connections: 1, answered: 0 });
    } finally {
      await receiver.close();
    }
  });
});
