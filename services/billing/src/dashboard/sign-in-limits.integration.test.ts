import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GatewayError } from '@gateway/contracts';
import { createTestDatabase, type TestDatabase } from '@gateway/testing';
import { billingDatabaseTemplate, createPrismaClient, type PrismaClient } from '../db/client.js';
import { sha256Hex } from '../identity/secrets.js';
import { createDashboard, type Dashboard, type DashboardOptions } from './index.js';
import { PasswordWork } from './password-work.js';

/*
 * Dashboard sign-ins at billing: sign-ins per email are limited exactly under concurrency
 * and across replicas (the count is one row in PostgreSQL, its point taken in one statement
 * before the hash), and password work runs in a bulkhead that refuses at once when full.
 */

const PASSWORD = 'the right password, long';
const WRONG = 'a wrong password, long';
const ACCOUNT = 'usr_signinlimitsaccount';

let db: TestDatabase;
const clients: PrismaClient[] = [];
let nowMs = Date.parse('2031-03-01T08:00:00Z');
const clock = () => new Date(nowMs);

function replica(options: Partial<DashboardOptions> = {}) {
  const prisma = createPrismaClient(db.runtimeUrl, { maxConnections: 8 });
  clients.push(prisma);
  const counts = { hashed: 0, refused: 0 };
  const dashboard = createDashboard({
    prisma,
    clock,
    signInFailuresPerHour: 10,
    // Wide enough that only the limit under test refuses.
    passwordWork: { atOnce: 16, queue: 16 },
    onPasswordWork: (event) => (counts[event] += 1),
    ...options,
  });
  return { dashboard, counts, prisma };
}

async function owner(dashboard: Dashboard, email: string) {
  const invitation = await dashboard.users.invite(ACCOUNT, email);
  await dashboard.users.accept(invitation.token, PASSWORD);
}

/** The code a sign-in ended with: `ok`, or its error's code. */
const outcome = (dashboard: Dashboard, email: string, password: string) =>
  dashboard.sessions.signIn('owner', email, password).then(
    () => 'ok',
    (error: unknown) => (error instanceof GatewayError ? error.code : String(error)),
  );

const tally = (codes: string[]) =>
  codes.reduce<Record<string, number>>(
    (all, code) => ({ ...all, [code]: (all[code] ?? 0) + 1 }),
    {},
  );

beforeAll(async () => {
  db = await createTestDatabase(billingDatabaseTemplate);
  const { prisma } = replica();
  await prisma.account.create({ data: { id: ACCOUNT, name: 'limits' } });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.$disconnect()));
  await db?.drop();
});

describe('sign-ins per email', () => {
  it('checks no more wrong passwords than the limit, concurrently and across two replicas', async () => {
    const one = replica();
    const two = replica();
    await owner(one.dashboard, 'waves@example.com');
    const hashedBefore = one.counts.hashed + two.counts.hashed;
    // Two waves at once, alternating replicas: 8 then 7 wrong passwords. The right one goes
    // alone after them: inside a wave it could take one of the last points first (a right
    // password gives its point back), which is the race this limit allows, not the one tested.
    const codes: string[] = [];
    for (const size of [8, 7]) {
      codes.push(
        ...(await Promise.all(
          Array.from({ length: size }, (_, i) =>
            outcome((i % 2 ? two : one).dashboard, 'waves@example.com', WRONG),
          ),
        )),
      );
    }
    codes.push(await outcome(two.dashboard, 'waves@example.com', PASSWORD));
    // Exactly 10 checked (the limit), every other attempt refused before its hash: the right
    // password last included.
    expect(tally(codes)).toEqual({ invalid_credentials: 10, rate_limit_exceeded: 6 });
    expect(codes[15]).toBe('rate_limit_exceeded');
    expect(one.counts.hashed + two.counts.hashed - hashedBefore).toBe(10);
    const [row] = await one.prisma.$queryRaw<{ points: number }[]>`
      SELECT points FROM dashboard_sign_in_limits
      WHERE email_digest = ${sha256Hex('waves@example.com')}`;
    expect(row?.points).toBe(10);
  });

  it('says when to retry, gives the point of a right password back, and forgets an ended window', async () => {
    const { dashboard } = replica({ signInFailuresPerHour: 3 });
    await owner(dashboard, 'back@example.com');
    const sequence = [WRONG, PASSWORD, PASSWORD, WRONG, PASSWORD, WRONG];
    const codes: string[] = [];
    for (const password of sequence)
      codes.push(await outcome(dashboard, 'back@example.com', password));
    // Right passwords gave their points back: three wrong ones used up the window, no fewer.
    expect(codes).toEqual([
      'invalid_credentials',
      'ok',
      'ok',
      'invalid_credentials',
      'ok',
      'invalid_credentials',
    ]);
    const refused = await dashboard.sessions
      .signIn('owner', 'BACK@example.com', PASSWORD)
      .catch((e) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect((refused as GatewayError).status).toBe(429);
    const retryAfterS = (refused as GatewayError).details?.retryAfterS as number;
    expect(retryAfterS).toBeGreaterThan(3_500);
    expect(retryAfterS).toBeLessThanOrEqual(3_600);
    nowMs += retryAfterS * 1000;
    expect(await outcome(dashboard, 'back@example.com', PASSWORD)).toBe('ok');
    nowMs += 3_600_000;
    expect(await dashboard.signInLimits.purgeEnded()).toBeGreaterThanOrEqual(1);
  });

  it('keeps made-up emails as digests only', async () => {
    const { dashboard, prisma } = replica();
    expect(await outcome(dashboard, 'Nobody.Here@example.com', WRONG)).toBe('invalid_credentials');
    const rows = await prisma.$queryRaw<{ email_digest: string }[]>`
      SELECT email_digest FROM dashboard_sign_in_limits`;
    expect(rows.some((row) => row.email_digest.includes('nobody'))).toBe(false);
    expect(rows.every((row) => /^[0-9a-f]{64}$/.test(row.email_digest))).toBe(true);
  });
});

describe('the password bulkhead', () => {
  it('runs at most its turns, queues a few and refuses the rest at once, before any statement', async () => {
    const { dashboard, counts, prisma } = replica({ passwordWork: { atOnce: 1, queue: 2 } });
    const startedAt = performance.now();
    const codes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => outcome(dashboard, `flood${i}@example.com`, WRONG)),
    );
    expect(tally(codes)).toEqual({ invalid_credentials: 3, service_unavailable: 5 });
    expect(counts).toEqual({ hashed: 3, refused: 5 });
    // Refused ones took no point: only the three checked emails have a row.
    const digests = Array.from({ length: 8 }, (_, i) => sha256Hex(`flood${i}@example.com`));
    const rows = await prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM dashboard_sign_in_limits WHERE email_digest = ANY(${digests})`;
    expect(rows[0]?.n).toBe(3);
    expect(performance.now() - startedAt).toBeLessThan(10_000);
    const refused = await Promise.all([
      dashboard.sessions.signIn('owner', 'a@example.com', WRONG).catch((e: unknown) => e),
      dashboard.sessions.signIn('owner', 'b@example.com', WRONG).catch((e: unknown) => e),
      dashboard.sessions.signIn('owner', 'c@example.com', WRONG).catch((e: unknown) => e),
      dashboard.sessions.signIn('owner', 'd@example.com', WRONG).catch((e: unknown) => e),
    ]);
    const busy = refused.find((e) => e instanceof GatewayError && e.code === 'service_unavailable');
    expect((busy as GatewayError).status).toBe(503);
    expect((busy as GatewayError).details?.retryAfterS).toBe(1);
  });

  it('checks an invitation token before hashing the new password', async () => {
    const { dashboard, counts } = replica();
    const before = counts.hashed;
    const error = await dashboard.users
      .accept('an-unknown-invitation-token', PASSWORD)
      .catch((e: unknown) => e);
    expect((error as GatewayError).code).toBe('invalid_invitation');
    expect(counts.hashed).toBe(before);
  });

  it('never runs more than its turns, hands them over in order and frees them on errors', async () => {
    const work = new PasswordWork({ atOnce: 2, queue: 3 });
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const task = (i: number) =>
      work.run(async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 20));
        running -= 1;
        order.push(i);
        if (i === 0) throw new Error('boom');
        return i;
      });
    const results = await Promise.allSettled(Array.from({ length: 7 }, (_, i) => task(i)));
    expect(most).toBe(2);
    expect(results.map((r) => r.status)).toEqual([
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
    ]);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(work.load).toEqual({ running: 0, waiting: 0 });
    expect(await work.run(async () => 'free again')).toBe('free again');
  });
});
