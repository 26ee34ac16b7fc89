import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startPostgresWithStandby, type PostgresWithStandby } from './postgres-standby.js';

const dir = mkdtempSync(path.join(tmpdir(), 'postgres-standby-'));
chmodSync(dir, 0o755); // as root, the cluster's unprivileged owner must traverse it

let pair: PostgresWithStandby;
beforeAll(async () => {
  pair = await startPostgresWithStandby(dir);
}, 120_000);
afterAll(async () => {
  await pair?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function query<R extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Through the balancer: the writable server, whichever it is. */
const insert = (id: number) => query(pair.adminUrl, 'INSERT INTO note (id) VALUES ($1)', [id]);
const ids = async (url: string) =>
  (await query<{ id: number }>(url, 'SELECT id FROM note ORDER BY id')).map((row) => row.id);

async function syncStates(): Promise<string[]> {
  const rows = await query<{ sync_state: string }>(
    pair.writable.adminUrl,
    'SELECT sync_state FROM pg_stat_replication',
  );
  return rows.map((row) => row.sync_state);
}

/** The standby answers reads on its own port; it replays a commit soon after it was flushed. */
async function expectOnStandby(expected: number[]): Promise<void> {
  const standby = pair.standby!;
  const [recovery] = await query<{ recovering: boolean }>(
    standby.adminUrl,
    'SELECT pg_is_in_recovery() AS recovering',
  );
  expect(recovery!.recovering).toBe(true);
  const deadline = Date.now() + 10_000;
  let seen = await ids(standby.adminUrl);
  while (seen.join() !== expected.join() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    seen = await ids(standby.adminUrl);
  }
  expect(seen).toEqual(expected);
}

const timings: Record<string, number[]> = { failover: [], rejoin: [] };
async function timed(name: 'failover' | 'rejoin', step: () => Promise<void>): Promise<void> {
  const started = performance.now();
  await step();
  timings[name]!.push(Math.round(performance.now() - started));
}
afterAll(() => {
  console.log(
    `failover ms: ${timings.failover!.join(', ')}; rejoin ms: ${timings.rejoin!.join(', ')}`,
  );
});

describe('startPostgresWithStandby', () => {
  it('fails over and rejoins again and again, losing no acknowledged commit', async () => {
    const first = pair.writable;
    const second = pair.standby!;
    expect(await syncStates()).toEqual(['sync']);
    await query(pair.adminUrl, 'CREATE TABLE note (id int PRIMARY KEY)');
    await insert(1);

    // Failover to the second server: it runs alone, its commits waiting for no standby.
    await timed('failover', () => pair.failover());
    expect(pair.writable.port).toBe(second.port);
    expect(pair.standby).toBeUndefined();
    expect(await ids(pair.adminUrl)).toEqual([1]);
    await insert(2);
    await expect(pair.failover()).rejects.toThrow(/no standby/);

    // The first server rebuilt as its synchronous standby, on its own port again.
    await timed('rejoin', () => pair.rejoin());
    expect(pair.standby!.port).toBe(first.port);
    await expect(pair.rejoin()).rejects.toThrow(/nothing to rejoin/);
    expect(await syncStates()).toEqual(['sync']);
    await insert(3);
    await expectOnStandby([1, 2, 3]);

    // Back to the first server: the ALTER SYSTEM settings follow the roles.
    await timed('failover', () => pair.failover());
    expect(pair.writable.port).toBe(first.port);
    expect(await ids(pair.adminUrl)).toEqual([1, 2, 3]);
    await insert(4);

    await timed('rejoin', () => pair.rejoin());
    expect(pair.standby!.port).toBe(second.port);
    expect(await syncStates()).toEqual(['sync']);
    await insert(5);
    await expectOnStandby([1, 2, 3, 4, 5]);

    // A writable server already down (crashed by a test) fails over too.
    await pair.crash();
    await timed('failover', () => pair.failover());
    expect(pair.writable.port).toBe(second.port);
    expect(await ids(pair.adminUrl)).toEqual([1, 2, 3, 4, 5]);
    await insert(6);
  }, 180_000);
});
