import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase } from '@gateway/testing';
import pg from 'pg';
import {
  billingDatabaseTemplate,
  createPrismaClient,
  Prisma,
  type PrismaClient,
} from './client.js';
import {
  ANY_AMOUNT_MODEL,
  DZD,
  admitHold,
  useLedgerHarness,
} from '../ledger/ledger-test-support.suite.js';

// 2^53 + 1: not representable as a JS number, so any float conversion on the way shows.
const BEYOND_DOUBLE = 9007199254740993n;

let db: { url: string; drop(): Promise<void> };
let prisma: PrismaClient;
let sql: pg.Client;
let sequence = 0;
/** Holds are placed as production places them (admission), in a database of their own. */
const ledgerHarness = useLedgerHarness();
const nextId = (prefix: string) => `${prefix}_${process.pid}_${++sequence}`;

async function createAccount(name = 'Acme') {
  return prisma.account.create({ data: { id: nextId('usr'), name } });
}

async function createApiKey(accountId: string, name: string) {
  return prisma.apiKey.create({
    data: {
      id: nextId('key'),
      accountId,
      name,
      keyDigest: nextId('digest'),
      secretCiphertext: Buffer.from('ciphertext'),
      secretNonce: Buffer.alloc(12, 1),
      secretAuthTag: Buffer.alloc(16, 2),
    },
  });
}

/** A balanced credit: funding pays `amount` to the customer. */
async function postCredit(accountId: string, amount: bigint) {
  return prisma.ledgerTransaction.create({
    data: {
      id: nextId('txn'),
      kind: 'credit',
      accountId,
      reference: 'test',
      entries: {
        create: [
          { ledgerAccount: 'system:funding', amountMicroDzd: -amount },
          { ledgerAccount: `customer:${accountId}`, accountId, amountMicroDzd: amount },
        ],
      },
    },
    include: { entries: { orderBy: { id: 'asc' } } },
  });
}

beforeAll(async () => {
  db = await createTestDatabase(billingDatabaseTemplate);
  prisma = createPrismaClient(db.url, { maxConnections: 4 });
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
});

afterAll(async () => {
  await prisma?.$disconnect();
  await sql?.end();
  await db?.drop();
});

describe('billing schema', () => {
  it('stores and reads an account with its defaults', async () => {
    const created = await createAccount('Sonatrach Labs');
    const read = await prisma.account.findUniqueOrThrow({ where: { id: created.id } });
    expect(read).toMatchObject({
      id: created.id,
      name: 'Sonatrach Labs',
      status: 'active',
      rateLimitPerMinute: 100,
      webhookFormat: 'A',
    });
    expect(read.createdAt).toBeInstanceOf(Date);
  });

  it('stores catalog models whose id contains a slash, with JSON nodes', async () => {
    const id = 'meta-llama/Llama-3.1-8B-Instruct';
    await prisma.model.create({
      data: {
        id,
        kind: 'chat',
        provider: 'node',
        upstreamModel: 'llama-3.1-8b',
        inputPriceMicroDzdPerM: 150_000_000n,
        outputPriceMicroDzdPerM: 600_000_000n,
        maxOutputTokens: 4096,
        nodes: [{ url: 'http://127.0.0.1:9000', weight: 1 }],
      },
    });
    const read = await prisma.model.findUniqueOrThrow({ where: { id } });
    expect(read).toMatchObject({
      id,
      kind: 'chat',
      provider: 'node',
      protocol: 'openai',
      inputPriceMicroDzdPerM: 150_000_000n,
      nodes: [{ url: 'http://127.0.0.1:9000', weight: 1 }],
    });
    const defaults = await prisma.model.create({
      data: {
        id: 'org/embed/v2',
        kind: 'embedding',
        provider: 'external',
        upstreamModel: 'embed-v2',
        inputPriceMicroDzdPerM: 1n,
        outputPriceMicroDzdPerM: 0n,
        maxOutputTokens: 1,
      },
    });
    expect(defaults.nodes).toEqual([]);
  });

  it('round-trips BigInt amounts beyond 2^53 exactly', async () => {
    const model = await prisma.model.create({
      data: {
        id: 'big/price',
        kind: 'completion',
        provider: 'external',
        upstreamModel: 'big',
        inputPriceMicroDzdPerM: BEYOND_DOUBLE,
        outputPriceMicroDzdPerM: -BEYOND_DOUBLE,
        maxOutputTokens: 1,
      },
    });
    expect(model.inputPriceMicroDzdPerM).toBe(BEYOND_DOUBLE);
    const read = await prisma.model.findUniqueOrThrow({ where: { id: 'big/price' } });
    expect(read.inputPriceMicroDzdPerM).toBe(BEYOND_DOUBLE);
    expect(read.outputPriceMicroDzdPerM).toBe(-BEYOND_DOUBLE);
    const raw = await sql.query(
      "SELECT input_price_micro_dzd_per_m::text AS v FROM models WHERE id = 'big/price'",
    );
    expect(raw.rows[0].v).toBe('9007199254740993');

    const account = await createAccount();
    const transaction = await postCredit(account.id, BEYOND_DOUBLE);
    expect(transaction.entries.map((entry) => entry.amountMicroDzd)).toEqual([
      -BEYOND_DOUBLE,
      BEYOND_DOUBLE,
    ]);
    expect(typeof transaction.entries[0]?.id).toBe('bigint');
    const sum = await prisma.ledgerEntry.aggregate({
      where: { accountId: account.id },
      _sum: { amountMicroDzd: true },
    });
    expect(sum._sum.amountMicroDzd).toBe(BEYOND_DOUBLE);
  });

  it('rejects a balance projection whose available amount would go negative', async () => {
    const account = await createAccount();
    await prisma.accountBalance.create({
      data: { accountId: account.id, postedCreditsMicroDzd: 1_000n, postedDebitsMicroDzd: 400n },
    });
    // Exactly zero available is allowed.
    await prisma.accountBalance.update({
      where: { accountId: account.id },
      data: { pendingMicroDzd: 600n },
    });
    await expect(
      prisma.accountBalance.update({
        where: { accountId: account.id },
        data: { pendingMicroDzd: { increment: 1n } },
      }),
    ).rejects.toThrow(/account_balances_available_nonnegative/);
    await expect(
      prisma.accountBalance.create({
        data: { accountId: (await createAccount()).id, postedDebitsMicroDzd: 1n },
      }),
    ).rejects.toThrow(/account_balances_available_nonnegative/);
    const balance = await prisma.accountBalance.findUniqueOrThrow({
      where: { accountId: account.id },
    });
    expect(balance.pendingMicroDzd).toBe(600n);
  });

  it('keeps the ledger append-only', async () => {
    const account = await createAccount();
    const transaction = await postCredit(account.id, 5_000_000n);
    const entry = transaction.entries[1]!;
    await expect(
      prisma.ledgerEntry.update({ where: { id: entry.id }, data: { amountMicroDzd: 1n } }),
    ).rejects.toThrow(/append-only/);
    await expect(prisma.ledgerEntry.delete({ where: { id: entry.id } })).rejects.toThrow(
      /append-only/,
    );
    await expect(
      prisma.ledgerTransaction.update({
        where: { id: transaction.id },
        data: { reference: 'rewritten' },
      }),
    ).rejects.toThrow(/append-only/);
    await expect(
      prisma.ledgerTransaction.delete({ where: { id: transaction.id } }),
    ).rejects.toThrow(/append-only/);
    await expect(sql.query('TRUNCATE ledger_entries, ledger_transactions')).rejects.toThrow(
      /append-only/,
    );
    const after = await prisma.ledgerEntry.findUniqueOrThrow({ where: { id: entry.id } });
    expect(after.amountMicroDzd).toBe(5_000_000n);
  });

  it('rejects a journal transaction whose entries do not sum to zero', async () => {
    const account = await createAccount();
    const id = nextId('txn');
    await expect(
      prisma.ledgerTransaction.create({
        data: {
          id,
          kind: 'adjustment',
          accountId: account.id,
          entries: {
            create: [
              { ledgerAccount: 'system:funding', amountMicroDzd: -10n },
              {
                ledgerAccount: `customer:${account.id}`,
                accountId: account.id,
                amountMicroDzd: 9n,
              },
            ],
          },
        },
      }),
    ).rejects.toThrow(/unbalanced/);
    expect(await prisma.ledgerTransaction.findUnique({ where: { id } })).toBeNull();
  });

  it('checks the balance per INSERT statement: all legs go in one statement', async () => {
    const account = await createAccount();
    const id = nextId('txn');
    const legs = [
      { transactionId: id, ledgerAccount: 'system:funding', amountMicroDzd: -10n },
      {
        transactionId: id,
        ledgerAccount: `customer:${account.id}`,
        accountId: account.id,
        amountMicroDzd: 10n,
      },
    ];
    await expect(
      prisma.$transaction(async (tx) => {
        await tx.ledgerTransaction.create({ data: { id, kind: 'credit', accountId: account.id } });
        await tx.ledgerEntry.create({ data: legs[0]! });
        await tx.ledgerEntry.create({ data: legs[1]! });
      }),
    ).rejects.toThrow(/unbalanced/);
    await prisma.$transaction(async (tx) => {
      await tx.ledgerTransaction.create({ data: { id, kind: 'credit', accountId: account.id } });
      await tx.ledgerEntry.createMany({ data: legs });
    });
    expect(await prisma.ledgerEntry.count({ where: { transactionId: id } })).toBe(2);
  });

  it('settles a hold at most once', async () => {
    const h = ledgerHarness();
    const accountId = await h.fundedAccount(DZD);
    // 200 input tokens at 0.5 DZD per million: a hold of exactly 100 µDZD, placed by admission.
    const hold = await admitHold(h, { accountId, amountMicroDzd: 100n, model: ANY_AMOUNT_MODEL });
    await h.ledger.settleHold(hold.id, { inputTokens: 200, outputTokens: 0 });
    // What no billing path does, tried as the schema's owner: the constraints refuse it.
    await expect(
      h.asOwner(
        `INSERT INTO ledger_transactions (id, kind, account_id, hold_id)
         VALUES ($1, 'hold_settlement', $2, $3)`,
        [nextId('txn'), accountId, hold.id],
      ),
    ).rejects.toMatchObject({ code: '23505', constraint: 'ledger_transactions_hold_id_key' });
    await expect(
      h.asOwner('UPDATE holds SET settled_amount_micro_dzd = 101 WHERE id = $1', [hold.id]),
    ).rejects.toThrow(/holds_settled_within_amount/);
  });

  it('keeps API key names unique per account', async () => {
    const first = await createAccount();
    const second = await createAccount();
    await createApiKey(first.id, 'default');
    await createApiKey(second.id, 'default');
    const duplicate = createApiKey(first.id, 'default');
    await expect(duplicate).rejects.toBeInstanceOf(Prisma.PrismaClientKnownRequestError);
    await expect(duplicate).rejects.toMatchObject({ code: 'P2002' });
    expect(await prisma.apiKey.count({ where: { accountId: first.id } })).toBe(1);
  });

  it('stores scoped tokens with model lists and nullable limits', async () => {
    const account = await createAccount();
    const token = await prisma.scopedToken.create({
      data: {
        id: nextId('tok'),
        digest: nextId('digest'),
        accountId: account.id,
        apiKeyName: 'default',
        models: ['meta-llama/Llama-3.1-8B-Instruct'],
        expiresAt: new Date('2030-01-01T00:00:00Z'),
        origin: 'client',
      },
    });
    expect(token).toMatchObject({
      spendingLimitMicroDzd: null,
      spentMicroDzd: 0n,
      reservedMicroDzd: 0n,
      revokedAt: null,
    });
    const anyModel = await prisma.scopedToken.create({
      data: {
        id: nextId('tok'),
        digest: nextId('digest'),
        accountId: account.id,
        apiKeyName: 'default',
        expiresAt: new Date('2030-01-01T00:00:00Z'),
        spendingLimitMicroDzd: BEYOND_DOUBLE,
        origin: 'issued',
      },
    });
    expect(anyModel.models).toEqual([]);
    expect(anyModel.spendingLimitMicroDzd).toBe(BEYOND_DOUBLE);
  });

  it('records the applied migrations in Prisma Migrate’s table', async () => {
    const rows = await sql.query(
      'SELECT migration_name, finished_at, applied_steps_count FROM _prisma_migrations',
    );
    expect(rows.rows.length).toBeGreaterThan(0);
    for (const row of rows.rows) {
      expect(row.finished_at).not.toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
  });
});
