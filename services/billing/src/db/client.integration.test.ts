import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '@gateway/testing';
import pg from 'pg';
import {
  billingDatabaseTemplate,
  createPrismaClient,
  pgPoolOf,
  type PrismaClient,
} from './client.js';

/*
 * A connection lost while a transaction holds it (PostgreSQL restarted or failed over, the path
 * to it cut) must fail that transaction, not the process: the nemesis saw billing exit on an
 * uncaught 'error' from such a client.
 */

let db: TestDatabase;
let prisma: PrismaClient;
let owner: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase(billingDatabaseTemplate);
  prisma = createPrismaClient(db.runtimeUrl, { maxConnections: 2 });
  owner = new pg.Client({ connectionString: db.url });
  await owner.connect();
});

afterAll(async () => {
  await owner?.end();
  await prisma?.$disconnect();
  await db?.drop();
});

it('survives the server ending a connection a transaction holds between its statements', async () => {
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', record);
  try {
    const pool = pgPoolOf(prisma);
    const held = await pool.connect();
    await held.query('BEGIN');
    const { rows } = await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const ended = new Promise((resolve) => held.once('end', resolve));
    await owner.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    await ended;
    await expect(held.query('SELECT 1')).rejects.toThrow();
    held.release(true);
    // The pool goes on with a new connection.
    const { rows: after } = await pool.query<{ one: number }>('SELECT 1 AS one');
    expect(after[0]!.one).toBe(1);
    expect(uncaught).toEqual([]);
  } finally {
    process.off('uncaughtException', record);
  }
});
