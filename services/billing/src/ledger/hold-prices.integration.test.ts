import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  DZD,
  MODEL_PRICES,
  admitHold,
  createLedgerHarness,
  expectedCost,
  type LedgerHarness,
} from './ledger-test-support.suite.js';

/*
 * A hold carries the prices its amount was computed with, and settlement charges those: what an
 * admitted request costs does not depend on catalog edits made while it runs.
 */

let h: LedgerHarness;

beforeAll(async () => {
  h = await createLedgerHarness({ maxConnections: 4 });
});

afterAll(async () => {
  await h?.finish();
});

const usage = { inputTokens: 1000, outputTokens: 500 };

/** A fresh catalog model at MODEL_PRICES (so expectedCost applies). */
async function catalogModel(): Promise<string> {
  const id = `acme/priced-${randomUUID()}`;
  await h.prisma.model.create({
    data: {
      id,
      kind: 'chat',
      provider: 'node',
      upstreamModel: 'priced',
      inputPriceMicroDzdPerM: MODEL_PRICES.input,
      outputPriceMicroDzdPerM: MODEL_PRICES.output,
      maxOutputTokens: 4096,
    },
  });
  return id;
}

const reprice = (id: string, factor: bigint) =>
  h.prisma.model.update({
    where: { id },
    data: {
      inputPriceMicroDzdPerM: MODEL_PRICES.input * factor,
      outputPriceMicroDzdPerM: MODEL_PRICES.output * factor,
    },
  });

async function placeFor(model: string) {
  const accountId = await h.fundedAccount(2n * DZD);
  const hold = await admitHold(h, { accountId, amountMicroDzd: DZD, model });
  return { accountId, holdId: hold.id };
}

describe('hold prices', () => {
  it('settles at the prices of admission after the catalog price changed', async () => {
    const model = await catalogModel();
    const up = await placeFor(model);
    const down = await placeFor(model);
    await reprice(model, 10n);
    expect((await h.ledger.settleHold(up.holdId, usage)).costMicroDzd).toBe(
      expectedCost(1000n, 500n),
    );
    await reprice(model, 0n);
    expect((await h.ledger.settleHold(down.holdId, usage)).costMicroDzd).toBe(
      expectedCost(1000n, 500n),
    );
  });

  it('takes the prices admission computed the amount with over the catalog', async () => {
    const model = await catalogModel();
    // Admission snapshots the prices it read; a catalog edit after it must not leak in.
    await reprice(model, 2n);
    const { holdId } = await placeFor(model);
    await reprice(model, 1n);
    expect((await h.ledger.settleHold(holdId, usage)).costMicroDzd).toBe(
      2n * expectedCost(1000n, 500n),
    );
  });

  it('settles a hold whose model left the catalog after admission', async () => {
    const model = await catalogModel();
    const { accountId, holdId } = await placeFor(model);
    // No billing call removes a model (its runtime role may not): the owner does.
    await h.asOwner('DELETE FROM models WHERE id = $1', [model]);
    const settled = await h.ledger.settleHold(holdId, usage);
    expect(settled.costMicroDzd).toBe(expectedCost(1000n, 500n));
    expect((await h.ledger.getBalance(accountId)).postedDebitsMicroDzd).toBe(settled.costMicroDzd);
  });

  it('settles a hold placed without a snapshot (previous release) at the catalog prices', async () => {
    const model = await catalogModel();
    const { holdId } = await placeFor(model);
    await h.prisma.$executeRaw`
      UPDATE holds SET input_price_micro_dzd_per_m = NULL, output_price_micro_dzd_per_m = NULL
       WHERE id = ${holdId}`;
    await reprice(model, 3n);
    expect((await h.ledger.settleHold(holdId, usage)).costMicroDzd).toBe(
      3n * expectedCost(1000n, 500n),
    );
  });

  it('the database refuses negative prices and half a snapshot', async () => {
    const { holdId } = await placeFor(await catalogModel());
    await expect(
      h.prisma.$executeRaw`UPDATE holds SET input_price_micro_dzd_per_m = -1 WHERE id = ${holdId}`,
    ).rejects.toThrow(/holds_prices_nonnegative/);
    await expect(
      h.prisma
        .$executeRaw`UPDATE holds SET input_price_micro_dzd_per_m = NULL WHERE id = ${holdId}`,
    ).rejects.toThrow(/holds_prices_together/);
  });
});
