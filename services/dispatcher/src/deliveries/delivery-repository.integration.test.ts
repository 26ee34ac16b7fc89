import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startHarness, type Harness } from '../testing/harness.suite.js';
import { MAX_ACTIVE_SECRETS } from '../secrets/signing-secrets.js';
import { DeliveryRepository, type ClaimedDelivery } from './delivery-repository.js';

describe('delivery repository: attempt records and leases', () => {
  let harness: Harness;
  let repository: DeliveryRepository;

  beforeAll(async () => {
    harness = await startHarness();
    repository = new DeliveryRepository(harness.pool, MAX_ACTIVE_SECRETS);
  });

  afterAll(async () => {
    await harness?.close();
  });

  const insertDue = async (
    id: string,
    traceParent: string | null = null,
    accountId = 'acct_repo',
  ) => {
    const inserted = await repository.insert({
      id,
      jobId: `job_${id}`,
      accountId,
      format: 'A',
      sealed: {
        ciphertext: Buffer.from('c'),
        nonce: Buffer.alloc(12),
        tag: Buffer.alloc(16),
        keyVersion: 1,
      },
      retentionMs: 60_000,
      firstDelayMs: 0,
      traceParent,
    });
    expect(inserted).toBe(true);
  };

  const stateOf = async (id: string) =>
    (
      await harness.pool.query<{ status: string; attempt_count: number; attempts: string[] }>(
        `SELECT status, attempt_count,
                ARRAY(SELECT attempt || ':' || outcome || ':' || coalesce(error, '-')
                        FROM webhook_attempts WHERE delivery_id = d.id ORDER BY attempt)
                  AS attempts
           FROM webhook_deliveries d WHERE id = $1`,
        [id],
      )
    ).rows[0];

  it('writes the attempt and the next state together, numbering attempts per delivery', async () => {
    const traceParent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await insertDue('dlv_repo_1', traceParent);
    const [first] = await repository.claimDue(10, 60_000);
    expect(first?.id).toBe('dlv_repo_1');
    // Every attempt is a span of the trace that queued the delivery.
    expect(first?.traceParent).toBe(traceParent);
    const startedAt = new Date();
    const retry = { outcome: 'retry' as const, delayMs: 0, error: 'HTTP 500' };
    expect(
      await repository.recordAttempt(first!, {
        startedAt,
        statusCode: 500,
        latencyMs: 3,
        verdict: retry,
      }),
    ).toBe(true);
    const [second] = await repository.claimDue(10, 60_000);
    expect(second?.id).toBe('dlv_repo_1');
    expect(
      await repository.recordAttempt(second!, {
        startedAt,
        statusCode: 204,
        latencyMs: 2,
        verdict: { outcome: 'delivered' },
      }),
    ).toBe(true);
    expect(await stateOf('dlv_repo_1')).toEqual({
      status: 'delivered',
      attempt_count: 2,
      attempts: ['1:retry:HTTP 500', '2:delivered:-'],
    });
  });

  it('writes nothing for a claim whose lease another dispatcher took over', async () => {
    await insertDue('dlv_repo_2');
    // A lease of 0 ms lapses at once: the next claim (another replica) takes the delivery.
    const [lapsed] = await repository.claimDue(10, 0);
    const [current] = await repository.claimDue(10, 60_000);
    expect(current?.id).toBe(lapsed?.id);
    const record = { startedAt: new Date(), statusCode: 204, latencyMs: 1 };
    expect(
      await repository.recordAttempt(lapsed!, { ...record, verdict: { outcome: 'delivered' } }),
    ).toBe(false);
    expect(await stateOf('dlv_repo_2')).toEqual({
      status: 'queued',
      attempt_count: 0,
      attempts: [],
    });
    expect(
      await repository.recordAttempt(current!, { ...record, verdict: { outcome: 'delivered' } }),
    ).toBe(true);
    expect((await stateOf('dlv_repo_2'))?.attempts).toEqual(['1:delivered:-']);
  });

  it("claims each delivery with its account's active secrets, oldest first", async () => {
    const secrets = harness.dispatcher.secrets;
    await secrets.active('acct_signed');
    await secrets.rotate('acct_signed');
    const expected = await secrets.active('acct_signed');
    expect(expected).toHaveLength(2);
    await insertDue('dlv_repo_3', null, 'acct_signed');
    await insertDue('dlv_repo_4', null, 'acct_unsigned');
    const claims = new Map((await repository.claimDue(10, 60_000)).map((c) => [c.id, c]));
    const signed = claims.get('dlv_repo_3')!;
    expect(signed.secrets.map((row) => row.id)).toEqual(expected.map((secret) => secret.id));
    const opened = await secrets.claimed('acct_signed', signed.secrets);
    expect(opened).toEqual(expected);
    // An account without a secret yet: none claimed; the attempt creates the first one.
    expect(claims.get('dlv_repo_4')!.secrets).toEqual([]);
  });

  it('stores a batch in one statement, refusing each job that already has a delivery', async () => {
    await insertDue('dlv_repo_5');
    const delivery = (id: string, jobId: string) => ({
      id,
      jobId,
      accountId: 'acct_batch',
      format: 'B' as const,
      sealed: {
        ciphertext: Buffer.from(id),
        nonce: Buffer.alloc(12),
        tag: Buffer.alloc(16),
        keyVersion: 2,
      },
      retentionMs: 60_000,
      firstDelayMs: 0,
      traceParent: null,
    });
    const created = await repository.insertMany([
      delivery('dlv_repo_6', 'job_dlv_repo_5'), // stored before
      delivery('dlv_repo_7', 'job_batch_1'),
      delivery('dlv_repo_8', 'job_batch_1'), // the same job, earlier in this batch
      delivery('dlv_repo_9', 'job_batch_2'),
    ]);
    expect(created).toEqual([false, true, false, true]);
    const { rows } = await harness.pool.query<{ id: string; format: string; key: number }>(
      `SELECT id, format, payload_key_version AS key FROM webhook_deliveries
        WHERE account_id = 'acct_batch' ORDER BY id`,
    );
    expect(rows).toEqual([
      { id: 'dlv_repo_7', format: 'B', key: 2 },
      { id: 'dlv_repo_9', format: 'B', key: 2 },
    ]);
    const claimed = (await repository.claimDue(10, 60_000)).filter(
      (claim) => claim.accountId === 'acct_batch',
    );
    expect(claimed.map((claim) => claim.sealed?.ciphertext.toString()).sort()).toEqual([
      'dlv_repo_7',
      'dlv_repo_9',
    ]);
  });

  it('records several attempts in one statement, none whose lease was lost', async () => {
    await insertDue('dlv_repo_10');
    await insertDue('dlv_repo_11');
    await insertDue('dlv_repo_12');
    const claims = (await repository.claimDue(10, 60_000)).filter((claim) =>
      ['dlv_repo_10', 'dlv_repo_11', 'dlv_repo_12'].includes(claim.id),
    );
    expect(claims).toHaveLength(3);
    const byId = (id: string) => claims.find((claim) => claim.id === id)!;
    const startedAt = new Date();
    const recorded = await repository.recordAttempts([
      {
        claim: byId('dlv_repo_10'),
        attempt: { startedAt, statusCode: 204, latencyMs: 4, verdict: { outcome: 'delivered' } },
      },
      {
        claim: { ...byId('dlv_repo_11'), leaseId: '00000000-0000-4000-8000-000000000000' },
        attempt: { startedAt, statusCode: 204, latencyMs: 5, verdict: { outcome: 'delivered' } },
      },
      {
        claim: byId('dlv_repo_12'),
        attempt: {
          startedAt,
          statusCode: 503,
          latencyMs: 6,
          verdict: { outcome: 'retry', delayMs: 60_000, error: 'HTTP 503' },
        },
      },
    ]);
    expect(recorded).toEqual([true, false, true]);
    expect(await stateOf('dlv_repo_10')).toEqual({
      status: 'delivered',
      attempt_count: 1,
      attempts: ['1:delivered:-'],
    });
    expect(await stateOf('dlv_repo_11')).toEqual({
      status: 'queued',
      attempt_count: 0,
      attempts: [],
    });
    expect(await stateOf('dlv_repo_12')).toEqual({
      status: 'retrying',
      attempt_count: 1,
      attempts: ['1:retry:HTTP 503'],
    });
  });

  it("records, of one delivery's lapsed and current attempts in a batch, the lease holder's", async () => {
    await insertDue('dlv_repo_13');
    const [lapsed] = (await repository.claimDue(10, 0)).filter((c) => c.id === 'dlv_repo_13');
    const [current] = (await repository.claimDue(10, 60_000)).filter((c) => c.id === 'dlv_repo_13');
    const attempt = { startedAt: new Date(), statusCode: 204, latencyMs: 3 };
    const recorded = await repository.recordAttempts([
      { claim: lapsed!, attempt: { ...attempt, verdict: { outcome: 'delivered' } } },
      {
        claim: current!,
        attempt: { ...attempt, verdict: { outcome: 'retry', delayMs: 60_000, error: 'HTTP 503' } },
      },
    ]);
    expect(recorded).toEqual([false, true]);
    expect(await stateOf('dlv_repo_13')).toEqual({
      status: 'retrying',
      attempt_count: 1,
      attempts: ['1:retry:HTTP 503'],
    });
  });

  it("claims a crowded account's due deliveries after every other account's, and what they leave", async () => {
    // Earlier tests' leftovers leased away: only this test's rows are due.
    await repository.claimDue(1000, 60_000);
    const ids = (claims: ClaimedDelivery[]) => claims.map((claim) => claim.id).sort();
    const insertBurst = async (first: number) => {
      for (const n of [first, first + 1, first + 2]) {
        await insertDue(`dlv_repo_${n}`, null, 'acct_crowded');
      }
      await insertDue(`dlv_repo_${first + 3}`, null, 'acct_quiet');
    };
    // In the order they fell due, the crowded account's burst comes first...
    await insertBurst(20);
    expect(ids(await repository.claimDue(2, 60_000))).toEqual(['dlv_repo_20', 'dlv_repo_21']);
    await repository.claimDue(1000, 60_000);
    // ...unless it is crowded: the other account's delivery first, then the burst in due order.
    await insertBurst(30);
    expect(ids(await repository.claimDue(2, 60_000, ['acct_crowded']))).toEqual([
      'dlv_repo_30',
      'dlv_repo_33',
    ]);
    // Nothing else due: the crowded account takes every slot left.
    expect(ids(await repository.claimDue(10, 60_000, ['acct_crowded']))).toEqual([
      'dlv_repo_31',
      'dlv_repo_32',
    ]);
  });
});
