import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import type { AdmitRequest, PlaceHold, PlaceHoldInput } from './admit.js';
import {
  fundedAccount,
  gatewayErrorOf,
  realPlaceHold,
  setUpIdentity,
  type IdentityHarness,
} from './fixtures.suite.js';
import type { PrismaTx } from './prisma-store.js';
import type { Principal } from './types.js';

let h: IdentityHarness;

/** The ledger's real placeHold: admission is tested against the real hold path. */
const placeHold: PlaceHold<PrismaTx> = (tx, input) => realPlaceHold(h)(tx, input);

const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';
const OTHER_MODEL = 'org/other-model';

interface Tenant {
  accountId: string;
  key: string;
  principal: Principal;
}

async function tenant(options: { creditDzd?: bigint; rateLimit?: number } = {}): Promise<Tenant> {
  const { accountId, key } = await fundedAccount(h, options);
  const principal = await h.identity.authenticator.authenticate(`Bearer ${key}`);
  return { accountId, key, principal };
}

async function tokenPrincipal(t: Tenant, body: Record<string, unknown>): Promise<Principal> {
  const { token } = await h.identity.scopedTokens.create(t.accountId, {
    api_key_name: 'auto',
    ...body,
  });
  return h.identity.authenticator.authenticate(`Bearer ${token}`);
}

const request = (principal: Principal, extra: Partial<AdmitRequest> = {}): AdmitRequest => ({
  principal,
  model: MODEL,
  estimate: { inputTokens: 1_000, maxOutputTokens: 500 },
  priority: false,
  ...extra,
});

const admit = (req: AdmitRequest, hold: PlaceHold<PrismaTx> = placeHold) =>
  h.identity.admitter.admit(req, { placeHold: hold });

const pending = async (accountId: string) =>
  (await h.prisma.accountBalance.findUniqueOrThrow({ where: { accountId } })).pendingMicroDzd;
const windowCount = async (accountId: string) =>
  (await h.sql.query('SELECT count FROM rate_limit_windows WHERE account_id = $1', [accountId]))
    .rows[0]?.count;

beforeAll(async () => {
  h = await setUpIdentity({ start: '2030-01-01T00:00:05Z' });
  // 150 DZD per million input tokens, 600 per million output tokens, 8192 output cap.
  await h.identity.catalog.put(MODEL, {
    kind: 'chat',
    provider: 'node',
    upstream_model: 'llama',
    input_price_dzd_per_m: 150,
    output_price_dzd_per_m: 600,
    max_output_tokens: 8192,
  });
  await h.identity.catalog.put(OTHER_MODEL, {
    kind: 'chat',
    provider: 'external',
    upstream_model: 'other',
    input_price_dzd_per_m: 1,
    output_price_dzd_per_m: 1,
    max_output_tokens: 100,
  });
});

afterAll(async () => {
  await h?.close();
});

describe('admit', () => {
  it('places a hold for the worst case at the model’s prices', async () => {
    const t = await tenant();
    const seen: PlaceHoldInput[] = [];
    const admission = await admit(request(t.principal), async (tx, input) => {
      seen.push(input);
      return placeHold(tx, input);
    });
    // 1000 × 150 + 500 × 600 DZD per million = 0.15 + 0.30 DZD.
    expect(admission.worstCaseMicroDzd).toBe(450_000n);
    expect(admission.reservedOutputTokens).toBe(500);
    expect(admission.model.id).toBe(MODEL);
    expect(admission.hold.amountMicroDzd).toBe(450_000n);
    expect(seen).toEqual([
      {
        accountId: t.accountId,
        amountMicroDzd: 450_000n,
        model: MODEL,
        // The prices the amount was computed with travel with the hold (settled at those).
        prices: { inputMicroDzdPerM: 150_000_000n, outputMicroDzdPerM: 600_000_000n },
        priority: false,
      },
    ]);
    expect(admission.rateLimit).toMatchObject({ allowed: true, limit: 100, remaining: 99 });
    expect(await pending(t.accountId)).toBe(450_000n);
    expect(await h.prisma.hold.findUnique({ where: { id: admission.hold.id } })).toMatchObject({
      status: 'pending',
      model: MODEL,
    });
  });

  it('adds 20% for priority, caps output at the model’s max and reserves it per choice', async () => {
    const t = await tenant();
    const priority = await admit(request(t.principal, { priority: true }));
    expect(priority.worstCaseMicroDzd).toBe(540_000n);
    expect(priority.hold.amountMicroDzd).toBe(540_000n);

    const uncapped = await admit(request(t.principal, { estimate: { inputTokens: 0 } }));
    expect(uncapped.reservedOutputTokens).toBe(8192);
    expect(uncapped.worstCaseMicroDzd).toBe(8192n * 600n);

    const clamped = await admit(
      request(t.principal, {
        estimate: { inputTokens: 0, maxOutputTokens: 1_000_000, choices: 3 },
      }),
    );
    expect(clamped.reservedOutputTokens).toBe(3 * 8192);
    expect(clamped.worstCaseMicroDzd).toBe(3n * 8192n * 600n);

    // ceil: 1 token at 1 DZD/M = 1 µDZD; ×1.2 = 1.2 → 2 µDZD.
    const tiny = await admit(
      request(t.principal, {
        model: OTHER_MODEL,
        priority: true,
        estimate: { inputTokens: 1, maxOutputTokens: 0 },
      }),
    );
    expect(tiny.worstCaseMicroDzd).toBe(2n);
  });

  it('passes the scoped token and its limit to placeHold', async () => {
    const t = await tenant();
    const principal = await tokenPrincipal(t, { models: [MODEL], spending_limit: 5 });
    const seen: PlaceHoldInput[] = [];
    await admit(request(principal), async (tx, input) => {
      seen.push(input);
      return placeHold(tx, input);
    });
    expect(seen[0]?.scopedToken).toEqual({
      id: principal.token!.id,
      spendingLimitMicroDzd: 5_000_000n,
    });
  });

  it('passes a caller-chosen hold id through', async () => {
    const t = await tenant();
    const admission = await admit({ ...request(t.principal), holdId: 'hold_from_request_42' });
    expect(admission.hold.id).toBe('hold_from_request_42');
  });

  it('answers model_not_found for a model outside the catalog', async () => {
    const t = await tenant();
    const error = await gatewayErrorOf(admit(request(t.principal, { model: 'org/missing' })));
    expect(error).toMatchObject({ code: 'model_not_found', param: 'model' });
  });

  it('answers model_not_allowed listing the allowed models, after model_not_found', async () => {
    const t = await tenant();
    const principal = await tokenPrincipal(t, { models: [MODEL, 'org/not-catalogued'] });
    const error = await gatewayErrorOf(admit(request(principal, { model: OTHER_MODEL })));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: 'model_not_allowed', param: 'model' });
    expect(error.message).toBe(
      `Model '${OTHER_MODEL}' is not allowed for this scoped token. Allowed models: ${MODEL}, org/not-catalogued`,
    );
    expect((error as GatewayError).status).toBe(403);
    // Unknown to the catalog: 404 comes first, even if the token does not list it.
    expect(await gatewayErrorOf(admit(request(principal, { model: 'org/nowhere' })))).toMatchObject(
      {
        code: 'model_not_found',
      },
    );
    // An any-model token may use any catalogued model.
    const any = await tokenPrincipal(t, {});
    await expect(admit(request(any, { model: OTHER_MODEL }))).resolves.toBeDefined();
    expect(await pending(t.accountId)).toBeGreaterThan(0n);
  });

  it('refuses a parameter default models do not accept, on node models only, before any hold', async () => {
    const t = await tenant();
    const principal = await tokenPrincipal(t, { models: [OTHER_MODEL] });
    const refused = await gatewayErrorOf(
      admit(request(t.principal, { nodeUnsupportedParameter: 'best_of' })),
    );
    expect(refused).toMatchObject({ code: 'invalid_request_body', param: 'best_of' });
    expect(refused.message).toBe('Unrecognized request argument supplied: best_of');
    expect((refused as GatewayError).status).toBe(400);
    expect(await pending(t.accountId)).toBe(0n);
    // Decided after the model and before the token's list: 400, not 403, for a node model.
    expect(
      await gatewayErrorOf(admit(request(principal, { nodeUnsupportedParameter: 'best_of' }))),
    ).toMatchObject({ code: 'invalid_request_body', param: 'best_of' });
    expect(
      await gatewayErrorOf(
        admit(request(t.principal, { model: 'org/missing', nodeUnsupportedParameter: 'best_of' })),
      ),
    ).toMatchObject({ code: 'model_not_found' });
    // The external provider drops it with a warning instead: admitted.
    const external = request(t.principal, { model: OTHER_MODEL, nodeUnsupportedParameter: 'x' });
    await expect(admit(external)).resolves.toBeDefined();
  });

  it('checks the model list before the budget, and the budget before the balance', async () => {
    const poor = await tenant({ creditDzd: 0n });
    const limited = await tokenPrincipal(poor, { models: [MODEL], spending_limit: 0.1 });
    expect(await gatewayErrorOf(admit(request(limited, { model: OTHER_MODEL })))).toMatchObject({
      code: 'model_not_allowed',
    });
    const budget = await gatewayErrorOf(admit(request(limited)));
    expect(budget).toMatchObject({ code: 'budget_exhausted' });
    expect(budget.message).toContain('0.1 DZD');
    const unlimited = await tokenPrincipal(poor, {});
    expect(await gatewayErrorOf(admit(request(unlimited)))).toMatchObject({
      code: 'insufficient_balance',
    });
    expect(await gatewayErrorOf(admit(request(poor.principal)))).toMatchObject({
      code: 'insufficient_balance',
    });
  });

  it('checks the rate limit first, and counts refused requests too', async () => {
    const t = await tenant({ rateLimit: 2 });
    expect(
      await gatewayErrorOf(admit(request(t.principal, { model: 'org/missing' }))),
    ).toMatchObject({ code: 'model_not_found' });
    await admit(request(t.principal));
    expect(await windowCount(t.accountId)).toBe(2);
    const limited = await gatewayErrorOf(admit(request(t.principal)));
    expect(limited).toMatchObject({
      code: 'rate_limit_exceeded',
      message: 'Account rate limit reached',
      details: {
        retryAfterS: 55,
        limit: 2,
        remaining: 0,
        resetMs: Date.parse('2030-01-01T00:01:00Z'),
      },
    });
    // Even an unknown model is a 429 once over the limit.
    expect(
      await gatewayErrorOf(admit(request(t.principal, { model: 'org/missing' }))),
    ).toMatchObject({ code: 'rate_limit_exceeded' });
    expect(await windowCount(t.accountId)).toBe(4);
    expect(await h.prisma.hold.count({ where: { accountId: t.accountId } })).toBe(1);
  });

  it('attaches the rate-limit decision to every refusal after the count', async () => {
    const poor = await tenant({ creditDzd: 0n });
    const error = await gatewayErrorOf(admit(request(poor.principal)));
    expect(error.details).toEqual({
      rateLimit: {
        allowed: true,
        limit: 100,
        remaining: 99,
        resetMs: Date.parse('2030-01-01T00:01:00Z'),
        retryAfterS: 55,
      },
    });
  });

  it('rolls back what a refusing placeHold wrote, but keeps the request counted', async () => {
    const t = await tenant();
    const writesThenRefuses: PlaceHold<PrismaTx> = async (tx, input) => {
      await placeHold(tx, input);
      throw new GatewayError('insufficient_balance', 'changed its mind');
    };
    expect(await gatewayErrorOf(admit(request(t.principal), writesThenRefuses))).toMatchObject({
      code: 'insufficient_balance',
    });
    expect(await h.prisma.hold.count({ where: { accountId: t.accountId } })).toBe(0);
    expect(await pending(t.accountId)).toBe(0n);
    expect(await windowCount(t.accountId)).toBe(1);
    // A database error inside placeHold is rolled back to the savepoint the same way.
    const violates: PlaceHold<PrismaTx> = async (tx, input) => {
      await tx.$executeRaw`SELECT 1`;
      try {
        await tx.accountBalance.update({
          where: { accountId: input.accountId },
          data: { pendingMicroDzd: { increment: 10n ** 15n } },
        });
      } catch {
        throw new GatewayError('insufficient_balance', 'constraint said no');
      }
      return { id: 'never', amountMicroDzd: 0n, expiresAt: new Date(), replayed: false };
    };
    expect(await gatewayErrorOf(admit(request(t.principal), violates))).toMatchObject({
      code: 'insufficient_balance',
    });
    expect(await windowCount(t.accountId)).toBe(2);
    // The connection is healthy afterwards.
    await expect(admit(request(t.principal))).resolves.toBeDefined();
  });

  it('rolls everything back, the count included, on an unexpected error', async () => {
    const t = await tenant();
    const crashes: PlaceHold<PrismaTx> = async (tx, input) => {
      await placeHold(tx, input);
      throw new Error('ledger crashed');
    };
    await expect(admit(request(t.principal), crashes)).rejects.toThrow('ledger crashed');
    expect(await windowCount(t.accountId)).toBeUndefined();
    expect(await pending(t.accountId)).toBe(0n);
  });

  it('validates the estimate', async () => {
    const t = await tenant();
    for (const estimate of [
      { inputTokens: -1 },
      { inputTokens: 1.5 },
      { inputTokens: 1, maxOutputTokens: -1 },
      { inputTokens: 1, choices: 0 },
      { inputTokens: 1, choices: 17 },
    ]) {
      expect(await gatewayErrorOf(admit(request(t.principal, { estimate })))).toMatchObject({
        code: 'invalid_request_body',
      });
    }
    expect(await windowCount(t.accountId)).toBeUndefined();
  });

  it('serialises concurrent admissions per account: holds never exceed the balance', async () => {
    const t = await tenant({ creditDzd: 2n }); // 2 DZD: four holds of 0.45 DZD fit, not five.
    const replicas = [h.newIdentity().identity, h.newIdentity().identity];
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        replicas[i % 2]!.admitter.admit(request(t.principal), { placeHold }),
      ),
    );
    const admitted = outcomes.filter((o) => o.status === 'fulfilled');
    expect(admitted).toHaveLength(4);
    for (const o of outcomes) {
      if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'insufficient_balance' });
    }
    expect(await pending(t.accountId)).toBe(4n * 450_000n);
    expect(await windowCount(t.accountId)).toBe(10);
  });
});
