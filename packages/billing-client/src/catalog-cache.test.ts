import { describe, expect, it } from '@jest/globals';
import type { CatalogEntry } from '@gateway/contracts';
import { CatalogCache } from './catalog-cache.js';

const entry = (updatedAt: string): CatalogEntry => ({
  id: 'acme/chat',
  kind: 'chat',
  provider: 'node',
  protocol: 'openai',
  upstreamModel: 'chat',
  maxOutputTokens: 100,
  nodes: [{ url: 'http://127.0.0.1:1' }],
  updatedAt,
});

function setUp(versions: string[]) {
  let nowMs = 0;
  const fetched: string[] = [];
  const cache = new CatalogCache({
    ttlMs: 1_000,
    fetchOne: async () => {
      const version = versions[Math.min(fetched.length, versions.length - 1)]!;
      fetched.push(version);
      return entry(version);
    },
    fetchAll: async () => [],
    now: () => nowMs,
  });
  return { cache, fetched, wait: (ms: number) => (nowMs += ms) };
}

const V1 = '2026-01-01T00:00:00.000Z';
const V2 = '2026-01-02T00:00:00.000Z';

describe('CatalogCache', () => {
  it('answers a lookup naming the cached version from memory, however old the fetch', async () => {
    const { cache, fetched, wait } = setUp([V1]);
    await cache.get('acme/chat', V1);
    wait(60_000);
    expect((await cache.get('acme/chat', V1)).updatedAt).toBe(V1);
    expect(fetched).toEqual([V1]);
  });

  it('fetches again at once when a lookup names a newer version', async () => {
    const { cache, fetched } = setUp([V1, V2]);
    await cache.get('acme/chat', V1);
    expect((await cache.get('acme/chat', V2)).updatedAt).toBe(V2);
    expect(fetched).toEqual([V1, V2]);
  });

  it('refetches a lookup without a version past the TTL only', async () => {
    const { cache, fetched, wait } = setUp([V1, V2]);
    await cache.get('acme/chat');
    wait(999);
    expect((await cache.get('acme/chat')).updatedAt).toBe(V1);
    wait(1);
    expect((await cache.get('acme/chat')).updatedAt).toBe(V2);
    expect(fetched).toEqual([V1, V2]);
  });
});
