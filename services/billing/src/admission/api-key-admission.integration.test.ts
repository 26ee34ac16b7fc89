import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import {
  ApiKeyLastUsed,
  carriesApiKey,
  createApiKeyAdmission,
  type AdmitApiKeys,
  type ApiKeyAdmissionResult,
} from '@gateway/ledger-calls';
import { urlAsRole, waitFor } from '@gateway/testing';
import pg from 'pg';
import { TEST_EDGE_ADMISSION_ROLE } from '../db/client.js';
import {
  fundedAccount,
  putStandardChatModel,
  setUpIdentity,
  type IdentityHarness,
} from '../identity/fixtures.suite.js';

/*
 * Edge's admission of API keys (ADR 0070) as edge's database role, against real PostgreSQL: the
 * same admission and refusals as billing's, a hold placed and the key's last use written through
 * the only two functions the role may execute, and no way to pass a scoped token's fields.
 */

let h: IdentityHarness;
let pool: pg.Pool;
let admit: AdmitApiKeys;
const MODEL = 'org/edge-chat';
// 150 DZD per million input tokens, 600 per million output: 1 000 in + 500 out hold 0.45 DZD.
const HOLD_MICRO_DZD = 450_000n;
let holdSeq = 0;

const item = (key: string) => ({
  authorization: `Bearer ${key}`,
  request: {
    model: MODEL,
    estimate: { inputTokens: 1_000, maxOutputTokens: 500 },
    priority: false,
    holdId: `hold_edge_${++holdSeq}`,
    endpoint: '/v1/chat/completions',
  },
});
const codeOf = (result: ApiKeyAdmissionResult | undefined) => {
  if (!result) return 'missing';
  if (result.ok) return 'admitted';
  return result.error instanceof GatewayError ? result.error.code : 'failed';
};

beforeAll(async () => {
  h = await setUpIdentity({ start: '2030-01-01T10:00:10Z' });
  await putStandardChatModel(h, MODEL);
  pool = new pg.Pool({ connectionString: urlAsRole(h.url, TEST_EDGE_ADMISSION_ROLE), max: 2 });
  const lastUsed = new ApiKeyLastUsed({ pool, clock: h.clock.now });
  admit = createApiKeyAdmission({ pool, clock: h.clock.now, lastUsed });
});

afterAll(async () => {
  await pool?.end();
  await h?.close();
});

describe("edge's admission of API keys", () => {
  it('admits a key as billing would, places the hold and writes the last use', async () => {
    const { accountId, key } = await fundedAccount(h);
    const one = item(key);
    const [result] = await admit([one]);
    if (!result?.ok) throw result?.error;
    expect(result.value.principal).toMatchObject({
      accountId,
      kind: 'api_key',
      apiKeyName: 'auto',
    });
    expect(result.value.admission.hold).toMatchObject({
      id: one.request.holdId,
      amountMicroDzd: HOLD_MICRO_DZD,
      replayed: false,
    });
    const { rows } = await h.sql.query('SELECT account_id FROM holds WHERE id = $1', [
      one.request.holdId,
    ]);
    expect(rows).toEqual([{ account_id: accountId }]);
    const lastUsedAt = await waitFor(
      async () => {
        const read = await h.sql.query<{ last_used_at: Date | null }>(
          "SELECT last_used_at FROM api_keys WHERE account_id = $1 AND name = 'auto'",
          [accountId],
        );
        return read.rows[0]?.last_used_at ?? undefined;
      },
      5_000,
      "the key's last use",
    );
    expect(lastUsedAt.toISOString()).toBe(h.clock.now().toISOString());
    // The same hold id again is a replay, not a second hold.
    const [again] = await admit([one]);
    expect(again?.ok && again.value.admission.hold.replayed).toBe(true);
  });

  it("refuses each item on its own, in billing's words", async () => {
    const { key } = await fundedAccount(h);
    const { key: poorKey } = await fundedAccount(h, { creditDzd: 0n });
    const results = await admit([
      item(key),
      item(`sk_live_${'A'.repeat(43)}`),
      item('not-a-key'),
      item(poorKey),
      { ...item(key), request: { ...item(key).request, estimate: { inputTokens: -1 } } },
    ]);
    expect(results.map(codeOf)).toEqual([
      'admitted',
      'invalid_api_key',
      'invalid_api_key',
      'insufficient_balance',
      'invalid_request_body',
    ]);
    const refusal = results[3];
    expect(refusal?.ok === false && (refusal.error as GatewayError).details?.rateLimit).toEqual(
      expect.objectContaining({ allowed: true }),
    );
  });

  it("cannot be handed a scoped token's fields: they are removed before admission", async () => {
    const { accountId } = await fundedAccount(h);
    const { rows: keys } = await h.sql.query<{ id: string; key_digest: string }>(
      'SELECT id, key_digest FROM api_keys WHERE account_id = $1',
      [accountId],
    );
    const signing = keys[0]!;
    const smuggled = {
      account_id: accountId,
      signing_key_id: signing.id,
      signing_key_digest: signing.key_digest,
      token_digest: 'e'.repeat(64),
      token_expires_at: '2031-01-01T00:00:00Z',
      new_token_id: 'tok_smuggled',
      window_start_ms: 0,
      model: MODEL,
      input_tokens: 10,
      choices: 1,
      priority: false,
      hold_id: 'hold_smuggled',
      hold_expires_at: '2031-01-01T00:00:00Z',
      now_at: h.clock.now().toISOString(),
    };
    const { rows } = await pool.query('SELECT outcome FROM billing_admit_api_keys_v1($1::jsonb)', [
      JSON.stringify([smuggled]),
    ]);
    expect(rows).toEqual([{ outcome: 'invalid_api_key' }]);
    const holds = await h.sql.query("SELECT 1 FROM holds WHERE id = 'hold_smuggled'");
    expect(holds.rowCount).toBe(0);
  });

  it('tells an API key from anything billing must admit itself', () => {
    expect(carriesApiKey(`Bearer sk_live_${'a'.repeat(43)}`)).toBe(true);
    expect(carriesApiKey('Bearer jwt:eyJhbGciOiJIUzI1NiJ9.e30.sig')).toBe(false);
    expect(carriesApiKey('Basic abc')).toBe(false);
    expect(carriesApiKey(undefined)).toBe(false);
  });
});

/*
 * What an admission costs PostgreSQL besides its statements (prisma/functions/README.md,
 * "Admission: one step per concern"): its steps save and restore no settings, and on a young
 * database, whose statistics say every table has a few rows, it still reads rows by their key,
 * never a table whole.
 */
const TABLES = ['accounts', 'api_keys', 'models', 'account_balances', 'holds', 'budgets'];

describe('admission in PostgreSQL', () => {
  it('runs its steps with the settings of the batch that calls them: none of their own', async () => {
    const { rows } = await pool.query<{ name: string; settings: string[] | null }>(
      `SELECT p.proname AS name, p.proconfig AS settings FROM pg_proc p
        WHERE p.proname LIKE 'billing\\_admission\\_%'
           OR p.proname IN ('billing_count_key_request', 'billing_key_tokens_used')
        ORDER BY p.proname`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(12);
    expect(rows.filter((row) => row.settings !== null)).toEqual([]);
  });

  it('finds every row by its key on a young database: no table read whole', async () => {
    // Forty accounts, each with its key and its balance: a plan that joins a key to its account
    // by hashing reads all of them (and all the keys) on every admission.
    const accounts = [];
    for (let i = 0; i < 40; i += 1) accounts.push(await fundedAccount(h));
    // Statistics of a young database, as autovacuum takes them: the planner knows the tables
    // are small.
    const owner = new pg.Client({ connectionString: h.url });
    await owner.connect();
    try {
      await owner.query(`ANALYZE ${TABLES.join(', ')}`);
    } finally {
      await owner.end();
    }
    // One connection: the transaction opened around each admission is its session's.
    const session = new pg.Pool({
      connectionString: urlAsRole(h.url, TEST_EDGE_ADMISSION_ROLE),
      max: 1,
    });
    const admitInSession = createApiKeyAdmission({ pool: session, clock: h.clock.now });
    const scans = async () => {
      const { rows } = await session.query<{ relname: string; seq: string }>(
        `SELECT relname, seq_scan AS seq FROM pg_stat_xact_user_tables
          WHERE relname = ANY ($1) ORDER BY relname`,
        [TABLES],
      );
      return new Map(rows.map((row) => [row.relname, Number(row.seq)]));
    };
    const read: string[] = [];
    // Past the fifth call, PL/pgSQL may run each statement's generic plan. A batch of one is
    // admitted directly, a batch of two in account order: both are checked.
    for (let round = 0; round < 10; round += 1) {
      const batch = accounts.slice(round * 3, round * 3 + 1 + (round % 2)).map((a) => item(a.key));
      await session.query('BEGIN');
      const before = await scans();
      const results = await admitInSession(batch);
      const after = await scans();
      await session.query('COMMIT');
      for (const result of results) if (!result.ok) throw result.error;
      const scanned = TABLES.filter((table) => (after.get(table) ?? 0) > (before.get(table) ?? 0));
      read.push(`${round}: ${scanned.join(', ') || 'none'}`);
    }
    await session.end();
    expect(read).toEqual(Array.from({ length: 10 }, (_, round) => `${round}: none`));
  });
});
