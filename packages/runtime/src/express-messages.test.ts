import { IncomingMessage, ServerResponse, type RequestListener } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from '@jest/globals';
import { listen, type RunningServer } from './http-server.js';

/*
 * The server makes its requests and responses with the Express app's prototypes from the start,
 * so Express's `Object.setPrototypeOf` (which makes V8 keep request objects through young
 * collections) finds nothing to change. Seen from a `request` listener that runs before
 * Express's.
 */

const running: RunningServer[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await server.close(0);
});

function expressApp() {
  const app = express();
  app.get('/who', (req, res) => {
    res.json({ accept: req.get('accept') ?? null, instance: req instanceof IncomingMessage });
  });
  return app;
}

/** Serves `listener` and records each message's prototypes as the server made them. */
async function serve(listener: RequestListener, options: Parameters<typeof listen>[3] = {}) {
  const server = await listen(listener, '127.0.0.1', 0, options);
  running.push(server);
  const prototypes: { request: object | null; response: object | null }[] = [];
  server.server.prependListener('request', (req, res) => {
    prototypes.push({ request: Object.getPrototypeOf(req), response: Object.getPrototypeOf(res) });
  });
  const get = async () => {
    const answer = await fetch(`http://127.0.0.1:${server.port}/who`, {
      headers: { accept: 'application/json' },
    });
    return { status: answer.status, body: (await answer.json()) as unknown };
  };
  return { prototypes, get };
}

describe('the HTTP server and Express prototypes', () => {
  it("makes an Express app's messages with its prototypes, and Express still serves them", async () => {
    const app = expressApp();
    const { prototypes, get } = await serve(app);
    expect(await get()).toEqual({
      status: 200,
      body: { accept: 'application/json', instance: true },
    });
    expect(prototypes).toEqual([{ request: app.request, response: app.response }]);
  });

  it('takes the prototypes from `expressApp` when a listener stands in front of the app', async () => {
    const app = expressApp();
    const { prototypes, get } = await serve((req, res) => app(req, res), { expressApp: app });
    expect((await get()).status).toBe(200);
    expect(prototypes).toEqual([{ request: app.request, response: app.response }]);
  });

  it("leaves a plain listener's messages as Node makes them", async () => {
    const { prototypes } = await serve((_req, res) => res.end('{}'));
    await fetch(`http://127.0.0.1:${running[0]!.port}/`).then((answer) => answer.text());
    expect(prototypes).toEqual([
      { request: IncomingMessage.prototype, response: ServerResponse.prototype },
    ]);
  });
});
