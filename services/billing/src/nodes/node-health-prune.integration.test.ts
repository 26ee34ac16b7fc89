import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase } from '@gateway/testing';
import { billingDatabaseTemplate, createPrismaClient, pgPoolOf } from '../db/client.js';
import { createNodeHealthService, NODE_HEALTH_FORGET_AFTER_MS } from './node-health.js';

describe('node health rows are bounded', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let prisma: ReturnType<typeof createPrismaClient>;
  beforeAll(async () => {
    db = await createTestDatabase(billingDatabaseTemplate);
    prisma = createPrismaClient(db.runtimeUrl, { maxConnections: 2 });
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.drop();
  });

  it('prunes nodes gone from the catalog and nodes not seen for a day', async () => {
    const catalogNodes = ['http://127.0.0.1:1', 'http://127.0.0.1:2'];
    const catalog = {
      list: async () => [{ id: 'm', nodes: catalogNodes.map((url) => ({ url })) }],
    };
    const service = createNodeHealthService(pgPoolOf(prisma), catalog);
    const nowMs = Date.now();
    await service.record({
      workerId: 'w',
      nodes: [
        { url: 'http://127.0.0.1:1', healthy: true, observedAtMs: nowMs },
        {
          url: 'http://127.0.0.1:2',
          healthy: true,
          observedAtMs: nowMs - NODE_HEALTH_FORGET_AFTER_MS - 1,
        },
        { url: 'http://127.0.0.1:3', healthy: false, observedAtMs: nowMs },
      ],
    });
    expect(await service.prune()).toBe(2);
    const { rows } = await pgPoolOf(prisma).query<{ url: string }>('SELECT url FROM node_health');
    expect(rows.map((row) => row.url)).toEqual(['http://127.0.0.1:1']);
  });
});
