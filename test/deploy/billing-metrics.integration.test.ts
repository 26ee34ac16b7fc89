import { Keyring } from '@gateway/crypto';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServiceMetrics } from '@gateway/observability';
import { createTestDatabase, type TestDatabase } from '@gateway/testing';
import {
  billingDatabaseTemplate,
  createPrismaClient,
  type PrismaClient,
} from '../../services/billing/src/db/client.js';
import { createIdentity, type Identity } from '../../services/billing/src/identity/index.js';
import {
  createLedgerService,
  type LedgerService,
} from '../../services/billing/src/ledger/index.js';
import { settledMicroDzdCounter } from '@gateway/observability';
import { instrumentBilling } from '../../services/billing/src/metrics.js';
import { parseExposition, sampleValue } from './support/prometheus-text.js';

/*
 * Billing's dashboard and alert metrics against a real, migrated database: holds open, settled
 * µDZD, invariant violations (rate-limited check) and sweeper lag.
 */

const HOUR_MS = 3_600_000;
const MODEL = 'metrics/chat';

let db: TestDatabase;
let prisma: PrismaClient;
let ledger: LedgerService;
let registry: ReturnType<typeof createServiceMetrics>['registry'];
let nowMs = Date.now();
let invariantChecks = 0;
let accountId: string;
let keyring: Keyring;
let identity: Identity;
let authorization: string;

async function scrape() {
  return parseExposition(await registry.metrics());
}

beforeAll(async () => {
  db = await createTestDatabase(billingDatabaseTemplate);
  prisma = createPrismaClient(db.runtimeUrl, { maxConnections: 4 });
  const clock = () => new Date();
  keyring = Keyring.parse(randomBytes(32).toString('base64'));
  identity = createIdentity({ prisma, keyring, clock });
  registry = createServiceMetrics('billing', { defaultMetrics: false }).registry;
  ledger = createLedgerService({
    prisma,
    clock,
    settledMicroDzd: settledMicroDzdCounter(registry),
  });
  instrumentBilling(registry, {
    prisma,
    ledger: {
      checkInvariants: async () => {
        invariantChecks += 1;
        return ledger.checkInvariants();
      },
    },
    now: () => nowMs,
    invariantCheckIntervalMs: 60_000,
  });
  await identity.catalog.put(MODEL, {
    kind: 'chat',
    provider: 'node',
    upstream_model: 'chat',
    input_price_dzd_per_m: 1_000,
    output_price_dzd_per_m: 2_000,
    max_output_tokens: 1_000,
    nodes: [{ url: 'http://127.0.0.1:9' }],
  });
  accountId = (await identity.accounts.create({ name: 'metrics' })).id;
  authorization = `Bearer ${(await identity.accounts.createApiKey(accountId, { name: 'metrics' })).key}`;
  await ledger.credit({ accountId, amountMicroDzd: 100_000_000n, reference: null });
});

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

/** A hold of `amount` µDZD placed by admission: a prompt at 1 000 µDZD per token, no output. */
async function admit(through: Identity, amount: bigint) {
  const { admission } = await through.admission.admit(authorization, {
    model: MODEL,
    estimate: { inputTokens: Number(amount / 1_000n), maxOutputTokens: 0 },
    priority: false,
  });
  expect(admission.hold.amountMicroDzd).toBe(amount);
  return admission.hold;
}

describe('billing metrics', () => {
  it('start at zero on an empty ledger', async () => {
    const page = await scrape();
    expect(page.types.get('billing_holds_open')).toBe('gauge');
    expect(page.types.get('billing_settled_micro_dzd_total')).toBe('counter');
    expect(sampleValue(page, 'billing_holds_open', { service: 'billing' })).toBe(0);
    expect(sampleValue(page, 'billing_settled_micro_dzd_total')).toBe(0);
    expect(sampleValue(page, 'billing_ledger_invariant_violations')).toBe(0);
    expect(sampleValue(page, 'billing_hold_sweeper_lag_seconds')).toBe(0);
  });

  it('count open holds and the µDZD settlements charge, once per hold', async () => {
    const first = await admit(identity, 5_000_000n);
    await admit(identity, 5_000_000n);
    expect(sampleValue(await scrape(), 'billing_holds_open')).toBe(2);

    // 1000 in × 1000 DZD/M + 500 out × 2000 DZD/M = 2 DZD = 2 000 000 µDZD.
    const settled = await ledger.settleHold(first.id, { inputTokens: 1000, outputTokens: 500 });
    expect(settled.costMicroDzd).toBe(2_000_000n);
    await ledger.settleHold(first.id, { inputTokens: 1000, outputTokens: 500 }); // replayed
    const page = await scrape();
    expect(sampleValue(page, 'billing_holds_open')).toBe(1);
    expect(sampleValue(page, 'billing_settled_micro_dzd_total')).toBe(2_000_000);
  });

  it('run the invariant check at most once per interval', async () => {
    const before = invariantChecks;
    await scrape();
    await scrape();
    expect(invariantChecks).toBe(before);
    nowMs += 61_000;
    const page = await scrape();
    expect(invariantChecks).toBe(before + 1);
    expect(sampleValue(page, 'billing_ledger_invariant_violations')).toBe(0);
  });

  it('report how long the most overdue pending hold waits for the sweeper', async () => {
    const anHourAgo = () => new Date(Date.now() - HOUR_MS);
    const past = createIdentity({ prisma, keyring, clock: anHourAgo, holdTtlMs: 60_000 });
    await admit(past, 1_000_000n);
    const lag = sampleValue(await scrape(), 'billing_hold_sweeper_lag_seconds')!;
    expect(lag).toBeGreaterThan(3_500);
    expect(lag).toBeLessThan(3_700);

    expect(await ledger.expireHolds(new Date())).toBe(1);
    const page = await scrape();
    expect(sampleValue(page, 'billing_hold_sweeper_lag_seconds')).toBe(0);
    expect(sampleValue(page, 'billing_holds_open')).toBe(1);
  });

  it('keep the last value when the database cannot answer, instead of failing the scrape', async () => {
    const broken = createServiceMetrics('billing', { defaultMetrics: false }).registry;
    const unreachable = createPrismaClient('postgres://nobody@127.0.0.1:1/none', {
      maxConnections: 1,
      connectionTimeoutMs: 500,
    });
    instrumentBilling(broken, {
      prisma: unreachable,
      ledger: createLedgerService({ prisma: unreachable, clock: () => new Date() }),
    });
    const page = parseExposition(await broken.metrics());
    expect(sampleValue(page, 'billing_holds_open')).toBe(0);
    expect(sampleValue(page, 'billing_ledger_invariant_violations')).toBe(0);
    await unreachable.$disconnect();
  });
});
