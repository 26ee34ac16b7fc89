import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { basebackupStandby, startPostgresCluster, type PostgresCluster } from './postgres.js';
import { startTcpBalancer, type TcpBalancer } from './tcp-balancer.js';

/**
 * A primary with a synchronous streaming standby, behind one address that always leads to the
 * writable server: what a managed PostgreSQL or an operator (CloudNativePG's `-rw` Service,
 * Patroni behind HAProxy) gives the services. As a `PostgresCluster` its URLs are that address.
 * The two servers swap roles as often as a test likes: `failover()`, then `rejoin()`, again.
 */
export interface PostgresWithStandby extends PostgresCluster {
  /** The server that takes writes now, where the balancer leads. */
  readonly writable: PostgresCluster;
  /** Its synchronous standby; none between `failover()` and `rejoin()`. */
  readonly standby: PostgresCluster | undefined;
  readonly balancer: TcpBalancer;
  /**
   * The writable server crashes (`immediate`; already down is fine), the standby is promoted and
   * the address moves to it; open connections are cut. Every commit acknowledged before is on
   * the new primary: commits waited for the standby's flush (`synchronous_commit=on`). The
   * promoted server then runs alone, its commits waiting for no one, until `rejoin()`. Rejects
   * when there is no standby (a failover since the last `rejoin()`).
   */
  failover(): Promise<void>;
  /**
   * The server crashed by the last `failover()` is rebuilt from scratch (its data removed, a
   * fresh base backup of the primary, its own port again) and becomes the primary's synchronous
   * standby; resolves once the primary lists it as `sync`. Rejects when there is nothing to
   * rejoin (no failover since the last rejoin).
   */
  rejoin(): Promise<void>;
}

/** The name the standby's WAL receiver reports (`pg_basebackup -R` sets no other). */
const STANDBY_NAME = 'walreceiver';

/**
 * Command-line settings of both servers, whatever their role. The synchronous standby is *not*
 * among them: the primary sets it with ALTER SYSTEM (a command-line setting would override that,
 * on the first primary forever), so every role change handles it the same way.
 */
const PRIMARY_SETTINGS = ['synchronous_commit=on'];
const STANDBY_SETTINGS = ['synchronous_commit=on', 'hot_standby=on'];

const SYNC_TIMEOUT_MS = 30_000;

interface Server {
  /** Holds `data/`, the socket and `postgres.log`; the same whatever role the server plays. */
  readonly baseDir: string;
  cluster: PostgresCluster;
}

export async function startPostgresWithStandby(baseDir: string): Promise<PostgresWithStandby> {
  mkdirSync(baseDir, { recursive: true });
  // Named neither primary nor standby: each plays both in turn.
  const first: Server = {
    baseDir: path.join(baseDir, 'a'),
    cluster: await startPostgresCluster({
      baseDir: path.join(baseDir, 'a'),
      settings: PRIMARY_SETTINGS,
    }),
  };
  let second: Server;
  try {
    second = {
      baseDir: path.join(baseDir, 'b'),
      cluster: await startStandby(first.cluster, path.join(baseDir, 'b')),
    };
  } catch (error) {
    await first.cluster.stop().catch(() => undefined);
    throw error;
  }
  const servers = [first, second];
  let writable = first;
  let standby: Server | undefined = second;
  /** The server the last failover crashed, until it rejoins. */
  let down: Server | undefined;
  const balancer = await startTcpBalancer([first.cluster.port]);
  // One role change at a time, even when a nemesis asks for the next before the last is done.
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(change: () => Promise<T>): Promise<T> => {
    const result = queue.then(change);
    queue = result.catch(() => undefined);
    return result;
  };
  const urlFor = (database: string) => `postgres://postgres@127.0.0.1:${balancer.port}/${database}`;
  return {
    get writable() {
      return writable.cluster;
    },
    get standby() {
      return standby?.cluster;
    },
    balancer,
    adminUrl: urlFor('postgres'),
    port: balancer.port,
    urlFor,
    restart: () => serialized(() => writable.cluster.restart()),
    crash: () => serialized(() => writable.cluster.crash()),
    promote: () => Promise.reject(new Error('promote the standby with failover()')),
    failover: () =>
      serialized(async () => {
        const promoted = standby;
        if (!promoted) {
          throw new Error('failover(): there is no standby to promote; rejoin() first');
        }
        await crashIfRunning(writable);
        await promoted.cluster.promote();
        // Alone now: its commits must not wait for a standby (a rebuilt server inherits what its
        // primary had set with ALTER SYSTEM: the base backup copies postgresql.auto.conf).
        await setSyncStandby(promoted.cluster.adminUrl, undefined);
        down = writable;
        writable = promoted;
        standby = undefined;
        balancer.repoint([promoted.cluster.port]);
      }),
    rejoin: () =>
      serialized(async () => {
        const rebuilt = down;
        if (!rebuilt) {
          throw new Error('rejoin(): nothing to rejoin, no failover() since the last rejoin');
        }
        await crashIfRunning(rebuilt);
        // Root may remove the unprivileged owner's files; anyone else owns them.
        rmSync(path.join(rebuilt.baseDir, 'data'), { recursive: true, force: true });
        rebuilt.cluster = await startStandby(
          writable.cluster,
          rebuilt.baseDir,
          rebuilt.cluster.port,
        );
        down = undefined;
        standby = rebuilt;
      }),
    stop: async () => {
      await balancer.close();
      await Promise.allSettled(servers.map((server) => server.cluster.stop()));
    },
  };
}

/**
 * A fresh standby of `primary` in `baseDir` (whose `data/` must be absent), made synchronous:
 * resolves once the primary lists it as `sync`. A started standby that never becomes synchronous
 * is stopped again, and the primary names none.
 */
async function startStandby(
  primary: PostgresCluster,
  baseDir: string,
  port?: number,
): Promise<PostgresCluster> {
  // Before the primary names its synchronous standby: the backup's postgresql.auto.conf (which
  // it copies) then names none, and the standby, once promoted, waits for no one.
  await basebackupStandby(primary.port, baseDir);
  const standby = await startPostgresCluster({
    baseDir,
    settings: STANDBY_SETTINGS,
    ...(port !== undefined && { port }),
  });
  try {
    await setSyncStandby(primary.adminUrl, STANDBY_NAME);
    await waitForSyncStandby(primary.adminUrl);
  } catch (error) {
    // Left named, the missing standby would hold every commit of the primary.
    await setSyncStandby(primary.adminUrl, undefined).catch(() => undefined);
    await standby.stop().catch(() => undefined);
    throw error;
  }
  return standby;
}

/** Crashes the server unless it is down already (crashed by `crash()`, say). */
async function crashIfRunning(server: Server): Promise<void> {
  if (!existsSync(path.join(server.baseDir, 'data', 'postmaster.pid'))) return;
  await server.cluster.crash();
}

/**
 * Sets (or, with `undefined`, resets) `synchronous_standby_names` with ALTER SYSTEM and reloads;
 * resolves once a new session sees the value (the reload is asynchronous).
 */
async function setSyncStandby(adminUrl: string, name: string | undefined): Promise<void> {
  await withClient(adminUrl, async (client) => {
    await client.query(
      name === undefined
        ? 'ALTER SYSTEM RESET synchronous_standby_names'
        : `ALTER SYSTEM SET synchronous_standby_names = '${name}'`,
    );
    await client.query('SELECT pg_reload_conf()');
  });
  await until(`synchronous_standby_names to become '${name ?? ''}'`, () =>
    withClient(adminUrl, async (client) => {
      const { rows } = await client.query<{ synchronous_standby_names: string }>(
        'SHOW synchronous_standby_names',
      );
      return rows[0]?.synchronous_standby_names === (name ?? '');
    }),
  );
}

/** Until the primary lists a standby as synchronous. */
async function waitForSyncStandby(adminUrl: string): Promise<void> {
  await withClient(adminUrl, (client) =>
    until('the standby to become synchronous', async () => {
      const { rows } = await client.query<{ sync_state: string }>(
        'SELECT sync_state FROM pg_stat_replication',
      );
      return rows.some((row) => row.sync_state === 'sync');
    }),
  );
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Polls `done` every 100 ms until it holds, or rejects after SYNC_TIMEOUT_MS. */
async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + SYNC_TIMEOUT_MS;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`waited ${SYNC_TIMEOUT_MS} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
