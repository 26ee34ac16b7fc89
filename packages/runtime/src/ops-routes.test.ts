import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import request from 'supertest';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { httpReadiness, opsRoutes } from './ops-routes.js';

/*
 * A dependency counts as ready only when its own /readyz says so: had edge checked billing's
 * /healthz, it would say billing was "ok" on a first install while billing could not use its
 * database.
 */

let billingReady = false;
let billing: Server;
let billingUrl: string;

beforeAll(async () => {
  const app = express();
  app.use(
    opsRoutes({
      registry: new Registry(),
      checks: [
        {
          name: 'schema',
          check: async () => {
            if (!billingReady) throw new Error('schema not migrated');
          },
        },
      ],
      isShuttingDown: () => false,
    }),
  );
  billing = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => billing.once('listening', resolve));
  billingUrl = `http://127.0.0.1:${(billing.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => billing.close(resolve));
});

function edge() {
  const app = express();
  app.use(
    opsRoutes({
      registry: new Registry(),
      checks: [httpReadiness('billing', billingUrl)],
      isShuttingDown: () => false,
    }),
  );
  return app;
}

describe('httpReadiness', () => {
  it('is not ready while the other service is alive but not ready, and says why', async () => {
    billingReady = false;
    expect((await fetch(`${billingUrl}/healthz`)).status).toBe(200);
    const response = await request(edge()).get('/readyz');
    expect(response.status).toBe(503);
    expect(response.body.checks).toEqual({
      billing: 'billing answered 503 (schema: schema not migrated)',
    });
  });

  it('is ready once the other service is', async () => {
    billingReady = true;
    const response = await request(edge()).get('/readyz');
    expect(response.status).toBe(200);
    expect(response.body.checks).toEqual({ billing: 'ok' });
  });

  it('is not ready when the other service does not answer', async () => {
    const check = httpReadiness('billing', 'http://127.0.0.1:9');
    await expect(check.check()).rejects.toThrow();
  });
});
