import { mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { basebackupStandby, startPostgresCluster, type PostgresCluster } from './postgres.js';
import { startTcpBalancer, type TcpBalancer } from './tcp-balancer.js';

/**
 * A primary with a synchronous streaming standby, behind one address that always leads to the
 * writable server: what a managed PostgreSQL or an operator (CloudNativePG's `-rw` Service,
 * Patroni behind HAProxy) gives the services. As a `PostgresCluster` its URLs are that address.
 */
export interface PostgresWithStandby extends PostgresCluster {
  readonly primary: PostgresCluster;
  readonly standby: PostgresCluster;
  readonly balancer: TcpBalancer;
  /**
   * The primary crashes (`immediate`), the standby is promoted and the address moves to it;
   * open connections are cut. Every commit acknowledged before is on the new primary: commits
   * waited for the standby's flush (`synchronous_commit=on`).
   */
  failover(): Promise<void>;
}

/** The name the standby's WAL receiver reports (`pg_basebackup -R` sets no other). */
const STANDBY_NAME = 'walreceiver';

export async function startPostgresWithStandby(baseDir: string): Promise<PostgresWithStandby> {
  mkdirSync(baseDir, { recursive: true });
  const primary = await startPostgresCluster({
    baseDir: path.join(baseDir, 'primary'),
    settings: ['synchronous_commit=on', `synchronous_standby_names=${STANDBY_NAME}`],
  });
  let standby: PostgresCluster;
  try {
    await basebackupStandby(primary.port, path.join(baseDir, 'standby'));
    // No synchronous standby of its own: once promoted it runs alone, and commits must not wait.
    standby = await startPostgresCluster({
      baseDir: path.join(baseDir, 'standby'),
      settings: ['synchronous_commit=on', 'hot_standby=on'],
    });
    await waitForSyncStandby(primary.adminUrl);
  } catch (error) {
    await primary.stop().catch(() => undefined);
    throw error;
  }
  const balancer = await startTcpBalancer([primary.port]);
  let writable: PostgresCluster = primary;
  const urlFor = (database: string) => `postgres://postgres@127.0.0.1:${balancer.port}/${database}`;
  return {
    primary,
    standby,
    balancer,
    adminUrl: urlFor('postgres'),
    port: balancer.port,
    urlFor,
    restart: () => writable.restart(),
    crash: () => writable.crash(),
    promote: () => Promise.reject(new Error('promote the standby with failover()')),
    failover: async () => {
      await primary.crash();
      await standby.promote();
      writable = standby;
      balancer.repoint([standby.port]);
    },
    stop: async () => {
      await balancer.close();
      await Promise.allSettled([primary.stop(), standby.stop()]);
    },
  };
}

/** Until the primary lists the standby as synchronous (within 30 s). */
async function waitForSyncStandby(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { rows } = await client.query<{ sync_state: string }>(
        'SELECT sync_state FROM pg_stat_replication',
      );
      if (rows.some((row) => row.sync_state === 'sync')) return;
      if (Date.now() > deadline) throw new Error('the standby never became synchronous');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await client.end();
  }
}
