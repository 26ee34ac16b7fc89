import { Keyring } from '@gateway/crypto';
import { randomBytes } from 'node:crypto';
import { createLedgerService } from '../ledger/index.js';
import { createTestDatabase } from '@gateway/testing';
import pg from 'pg';
import {
  billingDatabaseTemplate,
  createPrismaClient,
  pgPoolOf,
  type PrismaClient,
} from '../db/client.js';
import { createIdentity, type Identity } from './index.js';
import type { Clock } from './types.js';

/** Shared set-up of the identity tests (not a test file: `.suite.ts` is neither built nor run). */

/** A clock the test moves by hand. */
export class ManualClock {
  #ms: number;

  constructor(start: Date | string) {
    this.#ms = new Date(start).getTime();
  }

  readonly now: Clock = () => new Date(this.#ms);

  get ms(): number {
    return this.#ms;
  }

  get s(): number {
    return Math.floor(this.#ms / 1000);
  }

  set(to: Date | string | number): void {
    this.#ms = new Date(to).getTime();
  }

  advance(ms: number): void {
    this.#ms += ms;
  }
}

export interface IdentityHarness {
  url: string;
  prisma: PrismaClient;
  /** Raw SQL, to read rows exactly as stored. */
  sql: pg.Client;
  clock: ManualClock;
  /** The MASTER_KEY keyring (one key, version 1). */
  keyring: Keyring;
  identity: Identity;
  /** A second wiring over the same database (other Prisma client), e.g. for concurrency. */
  newIdentity(options?: { tokenPrefix?: string; keyring?: Keyring }): {
    prisma: PrismaClient;
    identity: Identity;
  };
  close(): Promise<void>;
}

/** A database of its own (cloned from billing's migrated template) and an identity over it. */
export async function setUpIdentity(
  options: { start?: string; tokenPrefix?: string } = {},
): Promise<IdentityHarness> {
  const db = await createTestDatabase(billingDatabaseTemplate);
  const clock = new ManualClock(options.start ?? '2030-01-01T00:00:10Z');
  const keyring = Keyring.parse(randomBytes(32).toString('base64'));
  const clients: PrismaClient[] = [];
  const wire = (tokenPrefix = options.tokenPrefix, ring = keyring) => {
    const prisma = createPrismaClient(db.runtimeUrl, { maxConnections: 8 });
    clients.push(prisma);
    const identity = createIdentity({
      prisma,
      keyring: ring,
      clock: clock.now,
      ...(tokenPrefix === undefined ? {} : { tokenPrefix }),
    });
    return { prisma, identity };
  };
  const main = wire();
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  return {
    url: db.url,
    prisma: main.prisma,
    sql,
    clock,
    keyring,
    identity: main.identity,
    newIdentity: (more = {}) => wire(more.tokenPrefix ?? options.tokenPrefix, more.keyring),
    close: async () => {
      // Every integration test file ends with the ledger's invariant check.
      const report = await createLedgerService({
        prisma: main.prisma,
        clock: clock.now,
      }).checkInvariants();
      if (!report.ok)
        throw new Error(`ledger invariants violated:\n${report.violations.join('\n')}`);
      await Promise.all(
        clients.map(async (client) => {
          await client.$disconnect();
          // A client only admission used (pg pool, no Prisma query) is not disposed by Prisma.
          const pool = pgPoolOf(client);
          if (!pool.ended) await pool.end();
        }),
      );
      await sql.end();
      await db.drop();
    },
  };
}

/**
 * A node chat model `id` at 150 DZD per million input tokens and 600 per million output, capped
 * at 8 192 output tokens: an estimate of 1 000 in + 500 out holds 0.45 DZD.
 */
export async function putStandardChatModel(h: IdentityHarness, id: string): Promise<void> {
  await h.identity.catalog.put(id, {
    kind: 'chat',
    provider: 'node',
    upstream_model: 'llama',
    input_price_dzd_per_m: 150,
    output_price_dzd_per_m: 600,
    max_output_tokens: 8192,
  });
}

/** An account with a key named `auto`, credited `creditDzd` (1000 by default). */
export async function fundedAccount(
  h: IdentityHarness,
  options: { creditDzd?: bigint; rateLimit?: number } = {},
): Promise<{ accountId: string; key: string }> {
  const account = await h.identity.accounts.create({ name: 'Funded' });
  if (options.rateLimit !== undefined) {
    await h.identity.accounts.patch(account.id, { rateLimitPerMinute: options.rateLimit });
  }
  const { key } = await h.identity.accounts.createApiKey(account.id, { name: 'auto' });
  const amountMicroDzd = (options.creditDzd ?? 1_000n) * 1_000_000n;
  if (amountMicroDzd > 0n) {
    const ledger = createLedgerService({ prisma: h.prisma, clock: h.clock.now });
    await ledger.credit({ accountId: account.id, amountMicroDzd, reference: 'test top-up' });
  }
  return { accountId: account.id, key };
}

/** Expects `promise` to reject with a GatewayError of `code`; returns it for further checks. */
export async function gatewayErrorOf(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; param?: string; details?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('expected a rejection');
}
