import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { findExecutable, run, versionedDirs } from './exec.js';
import { freeLoopbackPort } from './ports.js';

export interface PostgresCluster {
  /** Superuser URL of the `postgres` database. */
  readonly adminUrl: string;
  readonly port: number;
  /** URL of another database on the same cluster. */
  urlFor(database: string): string;
  /** Stops the server at once (`immediate`: open connections are cut) and starts it again. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** Stops the server at once (`immediate`), like a crash: no checkpoint, connections cut. */
  crash(): Promise<void>;
  /** A standby becomes a primary (`pg_ctl promote`); resolves once it accepts writes. */
  promote(): Promise<void>;
}

export interface StartPostgresOptions {
  /** Directory that holds the cluster; created (initdb) if missing, reused otherwise. */
  baseDir: string;
  port?: number;
  /** Keep data safe on disk (the local stack); tests turn durability off for speed. */
  durable?: boolean;
  /**
   * Load pg_stat_statements (`shared_preload_libraries`), so that `CREATE EXTENSION
   * pg_stat_statements` can count every statement: the bench counts round trips per request.
   * Off by default: tests need no statement statistics and keep the server lean.
   */
  statementStatistics?: boolean;
  /** More server settings (`name=value`), after the defaults: they win. */
  settings?: readonly string[];
}

const PG_START_TIMEOUT_MS = 30_000;

function pgBinary(name: string): string {
  const explicit = process.env.PG_BIN ? [process.env.PG_BIN] : [];
  return findExecutable(name, [...explicit, ...versionedDirs('/usr/lib/postgresql', 'bin')]);
}

/** initdb refuses to run as root, so as root the cluster belongs to an unprivileged user. */
function clusterOwner(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name]).toString().trim());
      const gid = Number(execFileSync('id', ['-g', name]).toString().trim());
      return { name, uid, gid };
    } catch {
      // try the next candidate
    }
  }
  throw new Error('running as root and no unprivileged user (postgres, nobody) exists for initdb');
}

/**
 * Starts a PostgreSQL cluster on 127.0.0.1: throwaway for tests (durability off, the cluster
 * is discarded after the run) or kept for the local stack. Trust auth: only loopback listens.
 */
export async function startPostgresCluster(
  options: StartPostgresOptions,
): Promise<PostgresCluster> {
  const owner = clusterOwner();
  const dataDir = path.join(options.baseDir, 'data');
  const socketDir = path.join(options.baseDir, 'socket');
  const logFile = path.join(options.baseDir, 'postgres.log');
  mkdirSync(socketDir, { recursive: true });
  if (owner) {
    chownSync(options.baseDir, owner.uid, owner.gid);
    chownSync(socketDir, owner.uid, owner.gid);
  }
  const port = options.port ?? (await freeLoopbackPort());
  const asUser = owner?.name;
  // An existing cluster is reused: the local stack keeps its state across restarts.
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    const initdbArgs = ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'];
    await run(pgBinary('initdb'), initdbArgs, { asUser });
  }
  const serverOptions = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${socketDir}`,
    ...(options.durable
      ? []
      : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
    '-c max_connections=300',
    ...(options.statementStatistics ? ['-c shared_preload_libraries=pg_stat_statements'] : []),
    ...(options.settings ?? []).map((setting) => `-c ${setting}`),
  ].join(' ');
  try {
    await run(
      pgBinary('pg_ctl'),
      ['-D', dataDir, '-l', logFile, '-w', '-t', '30', '-o', serverOptions, 'start'],
      {
        asUser,
        timeoutMs: PG_START_TIMEOUT_MS,
      },
    );
  } catch (error) {
    throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${safeRead(logFile)}`);
  }
  const urlFor = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const stopAs = async (mode: 'fast' | 'immediate') => {
    await run(pgBinary('pg_ctl'), ['-D', dataDir, '-m', mode, '-w', 'stop'], { asUser });
  };
  return {
    adminUrl: urlFor('postgres'),
    port,
    urlFor,
    restart: async () => {
      const args = ['-D', dataDir, '-l', logFile, '-m', 'immediate', '-w', '-t', '30'];
      await run(pgBinary('pg_ctl'), [...args, '-o', serverOptions, 'restart'], {
        asUser,
        timeoutMs: PG_START_TIMEOUT_MS,
      });
    },
    stop: () => stopAs(options.durable ? 'fast' : 'immediate'),
    crash: () => stopAs('immediate'),
    promote: async () => {
      await run(pgBinary('pg_ctl'), ['-D', dataDir, '-w', '-t', '30', 'promote'], {
        asUser,
        timeoutMs: PG_START_TIMEOUT_MS,
      });
    },
  };
}

/** `pg_basebackup` of a running primary into `dataDir`, as a streaming standby of it (`-R`). */
export async function basebackupStandby(primaryPort: number, baseDir: string): Promise<void> {
  const owner = clusterOwner();
  mkdirSync(baseDir, { recursive: true });
  if (owner) chownSync(baseDir, owner.uid, owner.gid);
  const args = ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres'];
  await run(
    pgBinary('pg_basebackup'),
    [...args, '-D', path.join(baseDir, 'data'), '-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
    { asUser: owner?.name, timeoutMs: 120_000 },
  );
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-4000);
  } catch {
    return '(no server log)';
  }
}
