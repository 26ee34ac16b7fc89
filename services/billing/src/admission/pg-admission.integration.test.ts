import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { costMicroDzd, GatewayError } from '@gateway/contracts';
import fc from 'fast-check';
import jwt from 'jsonwebtoken';
import { pgPoolOf } from '../db/client.js';
import type { CredentialAdmitRequest } from './admission.js';
import {
  fundedAccount,
  gatewayErrorOf,
  setUpIdentity,
  type IdentityHarness,
  putStandardChatModel,
} from '../identity/fixtures.suite.js';
import { sha256Hex } from '../identity/secrets.js';

/*
 * Admission in one PostgreSQL round trip (billing_admit_v2), against real PostgreSQL: its
 * decisions, order and errors (the spec's error table), changes applying to the very next
 * request although signing keys are cached, and no overspending under concurrency. The rules
 * the removed TypeScript Admitter was tested for are tested here, on the production path.
 */

let h: IdentityHarness;
const MODEL = 'org/pg-chat';
const EXTERNAL = 'org/pg-external';

const request = (extra: Partial<CredentialAdmitRequest> = {}): CredentialAdmitRequest => ({
  model: MODEL,
  estimate: { inputTokens: 1_000, maxOutputTokens: 500 },
  priority: false,
  ...extra,
});
const admit = (credential: string, extra: Partial<CredentialAdmitRequest> = {}) =>
  h.identity.admission.admit(`Bearer ${credential}`, request(extra));
const codeOf = async (promise: Promise<unknown>) => (await gatewayErrorOf(promise)).code;
const pending = async (accountId: string) =>
  (await h.prisma.accountBalance.findUniqueOrThrow({ where: { accountId } })).pendingMicroDzd;
const windowCount = async (accountId: string) =>
  (await h.sql.query('SELECT count FROM rate_limit_windows WHERE account_id = $1', [accountId]))
    .rows[0]?.count;

function mint(t: { accountId: string; key: string }, extra: Record<string, unknown> = {}): string {
  const kid = `service:${t.accountId}:${Buffer.from('auto').toString('base64')}`;
  const payload = { sub: `service:${t.accountId}`, model: '*', exp: h.clock.s + 3600, ...extra };
  return 'jwt:' + jwt.sign(payload, t.key, { algorithm: 'HS256', keyid: kid, noTimestamp: true });
}

beforeAll(async () => {
  h = await setUpIdentity({ start: '2030-01-01T00:00:05Z' });
  // 150 DZD per million input tokens, 600 per million output tokens, 8192 output cap.
  await putStandardChatModel(h, MODEL);
  await h.identity.catalog.put(EXTERNAL, {
    kind: 'embedding',
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

describe('admission in one round trip', () => {
  it('admits an API key: principal, model, worst case, hold snapshotting prices', async () => {
    const t = await fundedAccount(h);
    const { principal, admission } = await admit(t.key, { holdId: 'hold_pg_1' });
    expect(principal).toMatchObject({ accountId: t.accountId, kind: 'api_key' });
    expect(principal.apiKeyName).toBe('auto');
    expect(admission.worstCaseMicroDzd).toBe(450_000n);
    expect(admission.hold).toMatchObject({ id: 'hold_pg_1', amountMicroDzd: 450_000n });
    expect(admission.hold.replayed).toBe(false);
    expect(admission.model).toMatchObject({ id: MODEL, provider: 'node', maxOutputTokens: 8192 });
    expect(admission.rateLimit).toMatchObject({ allowed: true, limit: 100, remaining: 99 });
    const hold = await h.prisma.hold.findUniqueOrThrow({ where: { id: 'hold_pg_1' } });
    expect(hold).toMatchObject({
      status: 'pending',
      inputPriceMicroDzdPerM: 150_000_000n,
      outputPriceMicroDzdPerM: 600_000_000n,
    });
    expect(await pending(t.accountId)).toBe(450_000n);
  });

  it('is idempotent on the hold id; another account’s id is a conflict', async () => {
    const t = await fundedAccount(h);
    await admit(t.key, { holdId: 'hold_pg_retry' });
    const retry = await admit(t.key, {
      holdId: 'hold_pg_retry',
      estimate: { inputTokens: 9, maxOutputTokens: 1 },
    });
    expect(retry.admission.hold).toMatchObject({ amountMicroDzd: 450_000n, replayed: true });
    expect(await pending(t.accountId)).toBe(450_000n);
    const other = await fundedAccount(h);
    const taken = await gatewayErrorOf(admit(other.key, { holdId: 'hold_pg_retry' }));
    expect(taken).toMatchObject({ code: 'conflict', details: { result: 'hold_id_taken' } });
  });

  it('keeps the error order, counts refusals and attaches the rate-limit decision', async () => {
    const t = await fundedAccount(h, { creditDzd: 0n });
    expect(await codeOf(h.identity.admission.admit(undefined, request()))).toBe('invalid_api_key');
    expect(await codeOf(admit('sk_live_' + 'A'.repeat(43)))).toBe('invalid_api_key');
    expect(await windowCount(t.accountId)).toBeUndefined();
    const missing = await gatewayErrorOf(admit(t.key, { model: 'org/missing' }));
    expect(missing).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect(missing.details?.rateLimit).toMatchObject({ allowed: true, remaining: 99 });
    expect(await codeOf(admit(t.key, { model: EXTERNAL, kinds: ['chat'] }))).toBe(
      'model_not_found',
    );
    const refused = await gatewayErrorOf(admit(t.key, { nodeUnsupportedParameter: 'best_of' }));
    expect(refused).toMatchObject({ code: 'invalid_request_body', param: 'best_of' });
    const token = mint(t, { models: [EXTERNAL], spending_limit: 0.1 });
    const notAllowed = await gatewayErrorOf(admit(token));
    expect(notAllowed.message).toBe(
      `Model '${MODEL}' is not allowed for this scoped token. Allowed models: ${EXTERNAL}`,
    );
    const limited = mint(t, { spending_limit: 0.1 });
    expect(await gatewayErrorOf(admit(limited))).toMatchObject({ code: 'budget_exhausted' });
    expect(await codeOf(admit(t.key))).toBe('insufficient_balance');
    expect(await windowCount(t.accountId)).toBe(6); // the two 401s were not counted
    // Nothing registered for refused requests.
    expect(await h.prisma.scopedToken.count({ where: { accountId: t.accountId } })).toBe(0);
  });

  it('answers 429 with its numbers once over the limit, even for an unknown model', async () => {
    const t = await fundedAccount(h, { rateLimit: 1 });
    await admit(t.key);
    const limited = await gatewayErrorOf(admit(t.key, { model: 'org/missing' }));
    expect(limited).toMatchObject({
      code: 'rate_limit_exceeded',
      details: { retryAfterS: 55, limit: 1, remaining: 0 },
    });
    expect(await h.prisma.hold.count({ where: { accountId: t.accountId } })).toBe(1);
  });

  it('registers a client-minted token with its first hold, then reads the registry', async () => {
    const t = await fundedAccount(h);
    const token = mint(t, { models: [MODEL], spending_limit: 2 });
    const { principal, admission } = await admit(token);
    const row = await h.prisma.scopedToken.findUniqueOrThrow({
      where: { digest: sha256Hex(token) },
    });
    expect(row).toMatchObject({ origin: 'client', reservedMicroDzd: 450_000n });
    expect(principal.token).toMatchObject({ id: row.id, models: [MODEL] });
    const hold = await h.prisma.hold.findUniqueOrThrow({ where: { id: admission.hold.id } });
    expect(hold.scopedTokenId).toBe(row.id);
    const again = await admit(token);
    expect(again.principal.token?.id).toBe(row.id);
  });

  it('applies suspension, revocation, key regeneration and deletion to the very next request', async () => {
    const t = await fundedAccount(h);
    const token = mint(t);
    await admit(token); // the signing key is now cached
    await h.identity.scopedTokens.revoke(token, { accountId: t.accountId });
    expect(await codeOf(admit(token))).toBe('token_revoked');

    const fresh = mint(t, { jti: 'fresh' });
    await admit(fresh);
    await h.identity.accounts.suspend(t.accountId);
    expect(await codeOf(admit(fresh))).toBe('account_suspended');
    expect(await codeOf(admit(t.key))).toBe('account_suspended');
    await h.identity.accounts.unsuspend(t.accountId);
    await admit(fresh);

    const { key: newKey } = await h.identity.accounts.regenerateApiKey(t.accountId, 'auto');
    expect(await codeOf(admit(fresh))).toBe('invalid_api_key');
    expect(await codeOf(admit(t.key))).toBe('invalid_api_key');
    const signedByNew = mint({ accountId: t.accountId, key: newKey }, { jti: 'new' });
    await expect(admit(signedByNew)).resolves.toBeDefined();

    await h.identity.accounts.deleteApiKey(t.accountId, 'auto');
    expect(await codeOf(admit(signedByNew))).toBe('invalid_api_key');
  });

  it('holds at the catalog’s current prices from the next request on', async () => {
    const t = await fundedAccount(h);
    const model = 'org/pg-repriced';
    const put = (price: number) =>
      h.identity.catalog.put(model, {
        kind: 'chat',
        provider: 'node',
        upstream_model: 'x',
        input_price_dzd_per_m: price,
        output_price_dzd_per_m: price,
        max_output_tokens: 10,
      });
    await put(1_000);
    const before = await admit(t.key, { model, estimate: { inputTokens: 990 } });
    await put(2_000);
    const after = await admit(t.key, { model, estimate: { inputTokens: 990 } });
    expect(before.admission.hold.amountMicroDzd).toBe(1_000_000n);
    expect(after.admission.hold.amountMicroDzd).toBe(2_000_000n);
  });

  // Content beyond text is refused before any hold unless the model declares it.
  it('refuses content the model does not declare, naming the part, and holds nothing', async () => {
    const t = await fundedAccount(h);
    const image = { kind: 'image' as const, param: 'messages[1].content[2]' };
    const refused = await gatewayErrorOf(
      admit(t.key, { holdId: 'hold_pg_media', media: { kinds: [image], imageCount: 1 } }),
    );
    expect(refused).toMatchObject({
      code: 'invalid_request_body',
      param: 'messages[1].content[2]',
      message: `Model '${MODEL}' does not take image input; it reads: text`,
    });
    const audio = { kind: 'audio' as const, param: 'messages[0].content[0]' };
    expect(
      await gatewayErrorOf(admit(t.key, { media: { kinds: [audio], imageCount: 0 } })),
    ).toMatchObject({ param: 'messages[0].content[0]' });
    expect(await pending(t.accountId)).toBe(0n);
    const { rows } = await h.sql.query('SELECT 1 FROM holds WHERE id = $1', ['hold_pg_media']);
    expect(rows).toHaveLength(0);
  });

  it('holds every image at the model’s per-image ceiling; remote URLs only where allowed', async () => {
    const t = await fundedAccount(h);
    const model = 'org/pg-vision';
    const put = (remote: boolean) =>
      h.identity.catalog.put(model, {
        kind: 'chat',
        provider: 'node',
        upstream_model: 'x',
        input_price_dzd_per_m: 1_000,
        output_price_dzd_per_m: 1_000,
        max_output_tokens: 10,
        input_modalities: ['text', 'image'],
        image_tokens: 500,
        remote_images: remote,
      });
    await put(false);
    const image = { kind: 'image' as const, param: 'messages[0].content[1]' };
    const estimate = { inputTokens: 990, maxOutputTokens: 10 };
    const held = await admit(t.key, { model, estimate, media: { kinds: [image], imageCount: 3 } });
    // (990 + 3 × 500 + 10) tokens × 1,000 DZD per million = 2.5 DZD.
    expect(held.admission.hold.amountMicroDzd).toBe(2_500_000n);
    const remote = { kind: 'remote_image' as const, param: 'messages[0].content[0]' };
    const refused = await gatewayErrorOf(
      admit(t.key, { model, media: { kinds: [remote], imageCount: 1 } }),
    );
    expect(refused).toMatchObject({
      code: 'invalid_request_body',
      param: 'messages[0].content[0]',
    });
    expect(refused.message).toMatch(/only as data: URLs/);
    await put(true);
    await expect(
      admit(t.key, { model, media: { kinds: [remote], imageCount: 1 } }),
    ).resolves.toBeDefined();
  });

  it('never overspends under concurrent admissions on one account (two replicas)', async () => {
    const t = await fundedAccount(h, { creditDzd: 3n }); // six holds of 0.45 DZD fit, not seven
    const token = mint(t, { spending_limit: 2 }); // four fit the token's limit
    const replicas = [h.identity, h.newIdentity().identity, h.newIdentity().identity];
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        replicas[i % 3]!.admission.admit(`Bearer ${i % 2 === 0 ? token : t.key}`, request()),
      ),
    );
    const admitted = outcomes.filter((o) => o.status === 'fulfilled');
    expect(admitted).toHaveLength(6);
    for (const o of outcomes) {
      if (o.status === 'rejected') {
        expect(['insufficient_balance', 'budget_exhausted']).toContain(o.reason.code);
      }
    }
    const balance = await h.prisma.accountBalance.findUniqueOrThrow({
      where: { accountId: t.accountId },
    });
    const available =
      balance.postedCreditsMicroDzd - balance.postedDebitsMicroDzd - balance.pendingMicroDzd;
    expect(available).toBeGreaterThanOrEqual(0n);
    expect(balance.pendingMicroDzd).toBe(6n * 450_000n);
    // A client-minted token is registered with its first hold: when the key's admissions took
    // the whole balance first (a race), the token was never admitted and has no row.
    const tokenAdmitted = outcomes.some((o, i) => o.status === 'fulfilled' && i % 2 === 0);
    const row = await h.prisma.scopedToken.findUnique({ where: { digest: sha256Hex(token) } });
    expect(row !== null).toBe(tokenAdmitted);
    expect(row?.reservedMicroDzd ?? 0n).toBeLessThanOrEqual(2_000_000n);
    expect(await windowCount(t.accountId)).toBe(30);
  });

  it('adds 20% for priority, caps output at the model’s max and reserves it per choice', async () => {
    const t = await fundedAccount(h);
    const priority = (await admit(t.key, { priority: true })).admission;
    expect(priority.worstCaseMicroDzd).toBe(540_000n);
    expect(priority.hold.amountMicroDzd).toBe(540_000n);
    const uncapped = (await admit(t.key, { estimate: { inputTokens: 0 } })).admission;
    expect(uncapped.reservedOutputTokens).toBe(8192);
    expect(uncapped.worstCaseMicroDzd).toBe(8192n * 600n);
    const estimate = { inputTokens: 0, maxOutputTokens: 1_000_000, choices: 3 };
    const clamped = (await admit(t.key, { estimate })).admission;
    expect(clamped.reservedOutputTokens).toBe(3 * 8192);
    expect(clamped.worstCaseMicroDzd).toBe(3n * 8192n * 600n);
    // ceil: 1 token at 1 DZD/M = 1 µDZD; ×1.2 = 1.2 → 2 µDZD.
    const tiny = await admit(t.key, {
      model: EXTERNAL,
      priority: true,
      estimate: { inputTokens: 1, maxOutputTokens: 0 },
    });
    expect(tiny.admission.worstCaseMicroDzd).toBe(2n);
  });

  it('reserves an issued scoped token’s share within its limit; the hold names the token', async () => {
    const t = await fundedAccount(h);
    const { token } = await h.identity.scopedTokens.create(t.accountId, {
      api_key_name: 'auto',
      models: [MODEL],
      spending_limit: 5,
    });
    const { principal, admission } = await admit(token);
    const tokenId = principal.token?.id ?? '';
    expect(principal.token).toMatchObject({ spendingLimitMicroDzd: 5_000_000n });
    const hold = await h.prisma.hold.findUniqueOrThrow({ where: { id: admission.hold.id } });
    expect(hold.scopedTokenId).toBe(tokenId);
    expect(await h.prisma.scopedToken.findUniqueOrThrow({ where: { id: tokenId } })).toMatchObject({
      spendingLimitMicroDzd: 5_000_000n,
      reservedMicroDzd: 450_000n,
    });
  });

  it('answers model_not_found before model_not_allowed; an any-model token takes any model', async () => {
    const t = await fundedAccount(h);
    const listed = await h.identity.scopedTokens.create(t.accountId, {
      api_key_name: 'auto',
      models: [MODEL, 'org/not-catalogued'],
    });
    const error = await gatewayErrorOf(admit(listed.token, { model: EXTERNAL }));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: 'model_not_allowed', param: 'model' });
    expect((error as unknown as GatewayError).status).toBe(403);
    expect(error.message).toBe(
      `Model '${EXTERNAL}' is not allowed for this scoped token. Allowed models: ${MODEL}, org/not-catalogued`,
    );
    // Unknown to the catalog: 404 comes first, even if the token does not list it.
    expect(await codeOf(admit(listed.token, { model: 'org/nowhere' }))).toBe('model_not_found');
    const any = await h.identity.scopedTokens.create(t.accountId, { api_key_name: 'auto' });
    await expect(admit(any.token, { model: EXTERNAL })).resolves.toBeDefined();
  });

  it("refuses a model off the API key's list, for the key and every token it signs", async () => {
    const t = await fundedAccount(h);
    const wide = await h.identity.scopedTokens.create(t.accountId, {
      api_key_name: 'auto',
      models: [MODEL, EXTERNAL],
    });
    const minted = mint(t);
    expect(await h.identity.accounts.setApiKeyModels(t.accountId, 'auto', [MODEL])).toEqual([
      MODEL,
    ]);
    const refused = await gatewayErrorOf(admit(t.key, { model: EXTERNAL }));
    expect(refused).toMatchObject({ code: 'model_not_allowed', param: 'model', status: 403 });
    expect(refused.message).toBe(
      `Model '${EXTERNAL}' is not allowed for API key 'auto'. Allowed models: ${MODEL}`,
    );
    // A token's own list narrows the key's, never widens it; a client-minted one likewise.
    expect(await codeOf(admit(wide.token, { model: EXTERNAL }))).toBe('model_not_allowed');
    expect(await codeOf(admit(minted, { model: EXTERNAL }))).toBe('model_not_allowed');
    // Refused before any hold; a listed model is admitted.
    expect(await pending(t.accountId)).toBe(0n);
    await expect(admit(t.key)).resolves.toBeDefined();
    await expect(admit(wide.token)).resolves.toBeDefined();
    // An empty list: any model again.
    await h.identity.accounts.setApiKeyModels(t.accountId, 'auto', []);
    await expect(admit(t.key, { model: EXTERNAL })).resolves.toBeDefined();
  });

  it('refuses a parameter default models do not accept on node models only, after the model', async () => {
    const t = await fundedAccount(h);
    const refused = await gatewayErrorOf(admit(t.key, { nodeUnsupportedParameter: 'best_of' }));
    expect(refused).toMatchObject({ code: 'invalid_request_body', param: 'best_of' });
    expect(refused.message).toBe('Unrecognized request argument supplied: best_of');
    expect(await pending(t.accountId)).toBe(0n);
    // Before the token's list (400, not 403) and after the catalog (404).
    const listsOther = mint(t, { models: [EXTERNAL] });
    expect(
      await gatewayErrorOf(admit(listsOther, { nodeUnsupportedParameter: 'best_of' })),
    ).toMatchObject({ code: 'invalid_request_body', param: 'best_of' });
    expect(
      await codeOf(admit(t.key, { model: 'org/missing', nodeUnsupportedParameter: 'best_of' })),
    ).toBe('model_not_found');
    // The external provider drops it with a warning instead: admitted.
    await expect(
      admit(t.key, { model: EXTERNAL, nodeUnsupportedParameter: 'x' }),
    ).resolves.toBeDefined();
  });

  it('attaches the whole rate-limit decision to a refusal after the count', async () => {
    const poor = await fundedAccount(h, { creditDzd: 0n });
    const error = await gatewayErrorOf(admit(poor.key));
    expect(error.code).toBe('insufficient_balance');
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

  it('validates the estimate before the request counts', async () => {
    const t = await fundedAccount(h);
    for (const estimate of [
      { inputTokens: -1 },
      { inputTokens: 1.5 },
      { inputTokens: 1, maxOutputTokens: -1 },
      { inputTokens: 1, choices: 0 },
      { inputTokens: 1, choices: 17 },
    ]) {
      expect(await codeOf(admit(t.key, { estimate }))).toBe('invalid_request_body');
    }
    expect(await windowCount(t.accountId)).toBeUndefined();
  });

  it('computes the worst case exactly as costMicroDzd (property)', async () => {
    const pool = pgPoolOf(h.prisma);
    const price = fc.bigInt({ min: 0n, max: 10n ** 15n });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2_000_000_000 }),
        fc.option(fc.integer({ min: 0, max: 1_000_000 })),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        price,
        price,
        fc.boolean(),
        async (inputTokens, maxOut, choices, cap, inPrice, outPrice, priority) => {
          const { rows } = await pool.query<{ cost: string }>(
            'SELECT billing_worst_case_micro_dzd($1, $2, $3, $4, $5, $6, $7)::text AS cost',
            [inputTokens, maxOut, choices, cap, inPrice, outPrice, priority].map((v) =>
              v === null ? null : String(v),
            ),
          );
          const expected = costMicroDzd({
            inputTokens,
            outputTokens: Math.min(maxOut ?? cap, cap) * choices,
            inputPriceMicroDzdPerM: inPrice,
            outputPriceMicroDzdPerM: outPrice,
            priority,
          });
          expect(rows[0]?.cost).toBe(expected.toString());
        },
      ),
      { numRuns: 300 },
    );
  });
});
