import { Writable } from 'node:stream';
import {
  createRabbitMqBus,
  gatewayNames,
  gatewayTopology,
  silentLogger,
  type MessageBus,
} from '@gateway/messaging';
import { createLogger } from '@gateway/observability';
import { testAmqpUrl } from '@gateway/testing';
import pg from 'pg';
import { createPrismaClient } from '../../services/billing/src/db/client.js';
import { createLedgerService } from '../../services/billing/src/ledger/index.js';
import { startSettlementConsumer } from '../../services/billing/src/settlements/settlement-consumer.js';
import type { WorkerFixture } from './worker-fixture.suite.js';

const silent = new Writable({ write: (_c, _e, cb) => cb() });

export interface BillingConsumer {
  bus: MessageBus;
  stop(): Promise<void>;
}

/** Billing's settlement consumer, in process, over the fixture's database and broker. */
export async function startSettlementConsumerFor(fixture: WorkerFixture): Promise<BillingConsumer> {
  const prisma = createPrismaClient(fixture.billing.databaseUrl, { maxConnections: 4 });
  const ledger = createLedgerService({ prisma, clock: () => new Date(), holdTtlMs: 900_000 });
  const bus = createRabbitMqBus({
    url: testAmqpUrl(),
    topology: gatewayTopology(fixture.prefix),
    logger: silentLogger,
  });
  await bus.start();
  const consumer = await startSettlementConsumer({
    bus,
    names: gatewayNames(fixture.prefix),
    ledger,
    logger: createLogger({ service: 'billing', destination: silent }),
    minBackoffMs: 20,
  });
  return {
    bus,
    async stop() {
      await consumer.cancel();
      await bus.close();
      await prisma.$disconnect();
    },
  };
}

async function query<T extends pg.QueryResultRow>(
  fixture: WorkerFixture,
  text: string,
  values: unknown[],
): Promise<T[]> {
  const sql = new pg.Client({ connectionString: fixture.billing.databaseUrl });
  await sql.connect();
  try {
    return (await sql.query<T>(text, values)).rows;
  } finally {
    await sql.end();
  }
}

/** Journal transactions naming the hold (its settlement: at most one). */
export async function ledgerTransactionsOf(fixture: WorkerFixture, holdId: string) {
  const rows = await query<{ n: string }>(
    fixture,
    'SELECT count(*) AS n FROM ledger_transactions WHERE hold_id = $1',
    [holdId],
  );
  return Number(rows[0]!.n);
}

/** Whether the hold's settlement was refunded (its answer reached nobody). */
export async function refunded(fixture: WorkerFixture, holdId: string): Promise<boolean> {
  const rows = await query<{ refunded: boolean }>(
    fixture,
    'SELECT refunded_at IS NOT NULL AS refunded FROM holds WHERE id = $1',
    [holdId],
  );
  return rows[0]?.refunded === true;
}

/** The account's posted balance (credits − debits), µDZD. */
export async function postedBalance(fixture: WorkerFixture): Promise<bigint> {
  const rows = await query<{ balance: string }>(
    fixture,
    `SELECT posted_credits_micro_dzd - posted_debits_micro_dzd AS balance
       FROM account_balances WHERE account_id = $1`,
    [fixture.account.accountId],
  );
  return BigInt(rows[0]!.balance);
}
