/**
 * Shared set-up of the ledger's test files (not a test file itself; `*.suite.ts` is left out of
 * the build). Each test file gets its own database cloned from the migrated template.
 */
import { afterAll, beforeAll, expect } from '@jest/globals';
import { createTestDatabase } from '@gateway/testing';
import pg from 'pg';
import { billingDatabaseTemplate, createPrismaClient, type PrismaClient } from '../db/client.js';
import { newId } from '../identity/secrets.js';
import {
  createLedgerService,
  type LedgerService,
  type LedgerServiceDeps,
} from './ledger-service.js';

export const DZD = 1_000_000n;
export const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';
/** 2 DZD per million input tokens, 6 DZD per million output tokens. */
export const MODEL_PRICES = { input: 2n * DZD, output: 6n * DZD };
export const HOLD_TTL_MS = 60_000;

/** A clock that moves only when told to. */
export class ManualClock {
  private current: number;

  constructor(start = Date.parse('2026-03-01T08:00:00.000Z')) {
    this.current = start;
  }

  readonly now = (): Date => new Date(this.current);

  advance(ms: number): Date {
    this.current += ms;
    return this.now();
  }
}

export interface LedgerHarness {
  prisma: PrismaClient;
  ledger: LedgerService;
  clock: ManualClock;
  databaseUrl: string;
  /** SQL as the schema owner: arranging what the service (its runtime role) may not do. */
  asOwner(text: string, values?: unknown[]): Promise<void>;
  /** Another service instance over the same database (a second replica). */
  replica(overrides?: Partial<LedgerServiceDeps>): LedgerService;
  createAccount(name?: string): Promise<string>;
  /** An account credited with `amount` µDZD. */
  fundedAccount(amount: bigint): Promise<string>;
  createToken(accountId: string, limit: bigint | null): Promise<string>;
  /** One hold's publish mark (ledger.markHoldsPublished); false when the hold is already final. */
  markPublished(holdId: string, expiresAt: Date): Promise<boolean>;
  /** Asserts checkInvariants() reports nothing, then closes and drops the database. */
  finish(): Promise<void>;
}

export async function createLedgerHarness(
  options: { maxConnections?: number } & Partial<LedgerServiceDeps> = {},
): Promise<LedgerHarness> {
  const { maxConnections = 20, ...overrides } = options;
  const db = await createTestDatabase(billingDatabaseTemplate);
  const prisma = createPrismaClient(db.runtimeUrl, { maxConnections, connectionTimeoutMs: 20_000 });
  const clock = new ManualClock();
  const replica = (more: Partial<LedgerServiceDeps> = {}) =>
    createLedgerService({
      prisma,
      clock: clock.now,
      holdTtlMs: HOLD_TTL_MS,
      entriesStableAfterMs: 0,
      ...overrides,
      ...more,
    });
  const ledger = replica();
  await prisma.model.create({
    data: {
      id: MODEL,
      kind: 'chat',
      provider: 'node',
      upstreamModel: 'llama3.1:8b',
      inputPriceMicroDzdPerM: MODEL_PRICES.input,
      outputPriceMicroDzdPerM: MODEL_PRICES.output,
      maxOutputTokens: 4096,
    },
  });

  const createAccount = async (name = 'Test account') => {
    const account = await prisma.account.create({ data: { id: newId('usr'), name } });
    return account.id;
  };

  return {
    prisma,
    ledger,
    clock,
    databaseUrl: db.url,
    asOwner: async (text, values) => {
      const owner = new pg.Client({ connectionString: db.url });
      await owner.connect();
      try {
        await owner.query(text, values);
      } finally {
        await owner.end();
      }
    },
    replica,
    createAccount,
    fundedAccount: async (amount) => {
      const accountId = await createAccount();
      await ledger.credit({ accountId, amountMicroDzd: amount, reference: 'test funding' });
      return accountId;
    },
    createToken: async (accountId, limit) => {
      const token = await prisma.scopedToken.create({
        data: {
          id: newId('tok'),
          digest: newId('digest'),
          accountId,
          apiKeyName: 'default',
          expiresAt: new Date('2030-01-01T00:00:00Z'),
          spendingLimitMicroDzd: limit,
          origin: 'issued',
        },
      });
      return token.id;
    },
    markPublished: async (holdId, expiresAt) =>
      (await ledger.markHoldsPublished([{ holdId, expiresAt }])).has(holdId),
    finish: async () => {
      try {
        const report = await ledger.checkInvariants();
        expect(report.violations).toEqual([]);
        expect(report.ok).toBe(true);
      } finally {
        await prisma.$disconnect();
        await db.drop();
      }
    },
  };
}

/** The settled cost of `inputTokens`/`outputTokens` at MODEL_PRICES, rounded up. */
export function expectedCost(inputTokens: bigint, outputTokens: bigint, priority = false): bigint {
  const weighted = inputTokens * MODEL_PRICES.input + outputTokens * MODEL_PRICES.output;
  const [num, den] = priority ? [weighted * 12n, 10_000_000n] : [weighted, 1_000_000n];
  return (num + den - 1n) / den;
}

/** Registers a harness for the file (created before its tests, checked and dropped after). */
export function useLedgerHarness(
  options: Parameters<typeof createLedgerHarness>[0] = {},
): () => LedgerHarness {
  let harness: LedgerHarness | undefined;
  beforeAll(async () => {
    harness = await createLedgerHarness(options);
  });
  afterAll(async () => {
    await harness?.finish();
  });
  return () => {
    if (!harness) throw new Error('the ledger harness is not ready yet');
    return harness;
  };
}
