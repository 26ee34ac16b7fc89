/**
 * Shared set-up of the ledger's test files (not a test file itself; `*.suite.ts` is left out of
 * the build). Each test file gets its own database cloned from the migrated template. Holds are
 * placed as production places them: through admission (admitHold, below).
 */
import { afterAll, beforeAll, expect } from '@jest/globals';
import { costMicroDzd, microDzdToDzd } from '@gateway/contracts';
import { Keyring } from '@gateway/crypto';
import { createTestDatabase } from '@gateway/testing';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  billingDatabaseTemplate,
  createPrismaClient,
  pgPoolOf,
  type PrismaClient,
} from '../db/client.js';
import { RATE_LIMIT_PER_MINUTE_MAX } from '../identity/accounts.js';
import { createIdentity, type Identity } from '../identity/index.js';
import { sha256Hex } from '../identity/secrets.js';
import {
  createLedgerService,
  type LedgerService,
  type LedgerServiceDeps,
} from './ledger-service.js';
import type { LedgerHold } from './types.js';

export const DZD = 1_000_000n;
export const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';
/** 2 DZD per million input tokens, 6 DZD per million output tokens. */
export const MODEL_PRICES = { input: 2n * DZD, output: 6n * DZD };
export const HOLD_TTL_MS = 60_000;
/** The API key every harness account has; a hold admitted with it records this name. */
export const API_KEY_NAME = 'default';
/**
 * 0.5 DZD per million input tokens, output free: every amount, priority or not, is the worst
 * case of some prompt, so a test whose hold amount MODEL cannot reach exactly uses this model.
 */
export const ANY_AMOUNT_MODEL = 'test/any-amount';
export const ANY_AMOUNT_PRICES = { input: DZD / 2n, output: 0n };

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
  /** Billing's identity wiring over the same database and clock: `identity.admission` places holds. */
  identity: Identity;
  clock: ManualClock;
  databaseUrl: string;
  /** SQL as the schema owner: arranging what the service (its runtime role) may not do. */
  asOwner(text: string, values?: unknown[]): Promise<void>;
  /** Another service instance over the same database (a second replica). */
  replica(overrides?: Partial<LedgerServiceDeps>): LedgerService;
  /** An account with an API key named API_KEY_NAME, rate-limited only at the maximum. */
  createAccount(name?: string): Promise<string>;
  /** An account credited with `amount` µDZD. */
  fundedAccount(amount: bigint): Promise<string>;
  /** A scoped token issued by the account's key, with this spending limit; its registry id. */
  createToken(accountId: string, limit: bigint | null): Promise<string>;
  /** The bearer credential of the account's API key, or of its scoped token `tokenId`. */
  credentialOf(owner: { accountId: string; tokenId?: string | undefined }): string;
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
      entriesStableAfterMs: 0,
      ...overrides,
      ...more,
    });
  const ledger = replica();
  const identity = createIdentity({
    prisma,
    keyring: Keyring.parse(randomBytes(32).toString('base64')),
    clock: clock.now,
    holdTtlMs: HOLD_TTL_MS,
  });
  await prisma.model.createMany({
    data: [
      [MODEL, 'llama3.1:8b', MODEL_PRICES] as const,
      [ANY_AMOUNT_MODEL, 'any-amount', ANY_AMOUNT_PRICES] as const,
    ].map(([id, upstreamModel, prices]) => ({
      id,
      kind: 'chat' as const,
      provider: 'node' as const,
      upstreamModel,
      inputPriceMicroDzdPerM: prices.input,
      outputPriceMicroDzdPerM: prices.output,
      maxOutputTokens: 4096,
    })),
  });

  const apiKeys = new Map<string, string>();
  const tokens = new Map<string, string>();
  const createAccount = async (name = 'Test account') => {
    const { id } = await identity.accounts.create({ name });
    // Races place hundreds of holds per account in one minute of the manual clock.
    await identity.accounts.patch(id, { rateLimitPerMinute: RATE_LIMIT_PER_MINUTE_MAX });
    apiKeys.set(id, (await identity.accounts.createApiKey(id, { name: API_KEY_NAME })).key);
    return id;
  };

  return {
    prisma,
    ledger,
    identity,
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
      const { token } = await identity.scopedTokens.create(accountId, {
        api_key_name: API_KEY_NAME,
        ...(limit === null ? {} : { spending_limit: microDzdToDzd(limit) }),
      });
      const row = await prisma.scopedToken.findUniqueOrThrow({
        where: { digest: sha256Hex(token) },
      });
      tokens.set(row.id, token);
      return row.id;
    },
    credentialOf: ({ accountId, tokenId }) => {
      const credential = tokenId === undefined ? apiKeys.get(accountId) : tokens.get(tokenId);
      if (!credential) throw new Error(`no credential for ${tokenId ?? accountId} in this harness`);
      return credential;
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
        // Admission runs on the pool under Prisma, which $disconnect may leave open.
        const pool = pgPoolOf(prisma);
        if (!pool.ended) await pool.end();
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

/**
 * The prompt (no output) whose worst case at `prices` is the largest amount not above `amount`,
 * and that amount: what admission reserves for `{ inputTokens, maxOutputTokens: 0 }`.
 */
export function admittableEstimate(
  amount: bigint,
  priority: boolean,
  prices: { input: bigint; output: bigint } = MODEL_PRICES,
): { inputTokens: number; amountMicroDzd: bigint } {
  // ceil(tokens × price × tier / 10^6) ≤ amount ⟺ tokens × price × tier × 10 ≤ amount × 10^7.
  const perToken = prices.input * (priority ? 12n : 10n);
  const inputTokens = perToken === 0n ? 0n : (amount * 10_000_000n) / perToken;
  const amountMicroDzd = costMicroDzd({
    inputTokens,
    outputTokens: 0n,
    inputPriceMicroDzdPerM: prices.input,
    outputPriceMicroDzdPerM: prices.output,
    priority,
  });
  return { inputTokens: Number(inputTokens), amountMicroDzd };
}

export interface AdmitHoldInput {
  accountId: string;
  /** What the hold reserves, exactly (an amount `model` cannot reach is an error). */
  amountMicroDzd: bigint;
  /** MODEL by default. */
  model?: string;
  priority?: boolean;
  /** A scoped token of the account (createToken): the request carries it, not the API key. */
  tokenId?: string;
  holdId?: string;
  requestId?: string;
}

/** A hold admission placed, as the ledger stores it, and whether it already existed. */
export type AdmittedHold = LedgerHold & { replayed: boolean };

/**
 * Places a hold the way production does: `PgAdmission.admit` with the account's API key (or
 * the scoped token), for a prompt whose worst case at the model's catalog prices is exactly
 * `amountMicroDzd`. Admission's refusals are thrown as they are.
 */
export async function admitHold(h: LedgerHarness, input: AdmitHoldInput): Promise<AdmittedHold> {
  const model = input.model ?? MODEL;
  const priority = input.priority ?? false;
  const catalog = await h.prisma.model.findUniqueOrThrow({ where: { id: model } });
  const prices = {
    input: catalog.inputPriceMicroDzdPerM,
    output: catalog.outputPriceMicroDzdPerM,
  };
  const estimate = admittableEstimate(input.amountMicroDzd, priority, prices);
  if (estimate.amountMicroDzd !== input.amountMicroDzd) {
    throw new Error(
      `no prompt on ${model} reserves exactly ${input.amountMicroDzd} µDZD` +
        `${priority ? ' at priority' : ''} (nearest below: ${estimate.amountMicroDzd})`,
    );
  }
  const { admission } = await h.identity.admission.admit(`Bearer ${h.credentialOf(input)}`, {
    model,
    estimate: { inputTokens: estimate.inputTokens, maxOutputTokens: 0 },
    priority,
    ...(input.holdId === undefined ? {} : { holdId: input.holdId }),
    ...(input.requestId === undefined ? {} : { requestId: input.requestId }),
  });
  const hold = await h.ledger.getHold(admission.hold.id);
  if (!hold) throw new Error(`admitted hold ${admission.hold.id} is missing`);
  return { ...hold, replayed: admission.hold.replayed };
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
