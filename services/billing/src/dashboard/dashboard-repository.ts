/**
 * The dashboard's repository: every statement on its users, sessions, invitations and sign-in
 * windows, the owner's view of `scoped_tokens`, and the overview's spend. Prisma for the rows it
 * models, plain `pg` for the sign-in windows (one upsert decides a point under its row lock).
 */
import type pg from 'pg';
import type { OperatorRole } from '@gateway/contracts';
import type { PrismaClient } from '../db/client.js';

export type ScopedTokenRow = Awaited<ReturnType<PrismaClient['scopedToken']['findFirstOrThrow']>>;
export type SessionRow = Awaited<ReturnType<PrismaClient['dashboardSession']['findUniqueOrThrow']>>;

// ------------------------------------------------------------------------------------ users

/** The user of `email` in a realm (its id and password hash), or null. */
export function findUserByEmail(
  prisma: PrismaClient,
  realm: 'owner' | 'operator',
  email: string,
): Promise<{ id: string; passwordHash: string | null } | null> {
  return realm === 'owner'
    ? prisma.ownerUser.findUnique({ where: { email } })
    : prisma.operatorUser.findUnique({ where: { email } });
}

export function findOwnerByEmail(prisma: PrismaClient, email: string) {
  return prisma.ownerUser.findUnique({ where: { email } });
}

export async function accountExists(prisma: PrismaClient, accountId: string): Promise<boolean> {
  const found = await prisma.account.findUnique({ where: { id: accountId }, select: { id: true } });
  return found !== null;
}

export function createInvitation(
  prisma: PrismaClient,
  data: {
    id: string;
    accountId: string;
    email: string;
    tokenDigest: string;
    createdAt: Date;
    expiresAt: Date;
  },
) {
  return prisma.ownerInvitation.create({ data });
}

/** Whether an unused, unexpired invitation has this digest (one indexed read). */
export async function openInvitationExists(
  prisma: PrismaClient,
  tokenDigest: string,
  now: Date,
): Promise<boolean> {
  const open = await prisma.ownerInvitation.findFirst({
    where: { tokenDigest, usedAt: null, expiresAt: { gt: now } },
    select: { id: true },
  });
  return open !== null;
}

/** Thrown inside the transaction to roll it back: the invitation cannot be used. */
class InvitationRefused extends Error {}

/**
 * Uses the invitation (once, atomically) and sets its owner's password, creating the owner as
 * `newOwnerId` when the email has none. Returns the owner's id; null, with nothing written, when
 * the invitation is unknown, used or expired, or its email owns another account.
 */
export async function useInvitation(
  prisma: PrismaClient,
  input: { tokenDigest: string; passwordHash: string; now: Date; newOwnerId: string },
): Promise<string | null> {
  const { tokenDigest, passwordHash, now } = input;
  try {
    return await prisma.$transaction(async (tx) => {
      const used = await tx.ownerInvitation.updateMany({
        where: { tokenDigest, usedAt: null, expiresAt: { gt: now } },
        data: { usedAt: now },
      });
      if (used.count !== 1) throw new InvitationRefused();
      const invitation = await tx.ownerInvitation.findUniqueOrThrow({ where: { tokenDigest } });
      const existing = await tx.ownerUser.findUnique({ where: { email: invitation.email } });
      if (existing && existing.accountId !== invitation.accountId) throw new InvitationRefused();
      if (existing) {
        await tx.ownerUser.update({ where: { id: existing.id }, data: { passwordHash } });
        return existing.id;
      }
      await tx.ownerUser.create({
        data: {
          id: input.newOwnerId,
          accountId: invitation.accountId,
          email: invitation.email,
          passwordHash,
          createdAt: now,
        },
      });
      return input.newOwnerId;
    });
  } catch (error) {
    if (error instanceof InvitationRefused) return null;
    throw error;
  }
}

export function findOperatorByEmail(prisma: PrismaClient, email: string) {
  return prisma.operatorUser.findUnique({ where: { email } });
}

export function createOperator(
  prisma: PrismaClient,
  data: { id: string; email: string; role: OperatorRole; passwordHash: string; createdAt: Date },
) {
  return prisma.operatorUser.create({ data });
}

/** Deletes invitations past their expiry (used or not); returns how many. */
export async function deleteExpiredInvitations(prisma: PrismaClient, now: Date): Promise<number> {
  const { count } = await prisma.ownerInvitation.deleteMany({ where: { expiresAt: { lte: now } } });
  return count;
}

// --------------------------------------------------------------------------------- sessions

export function createSession(
  prisma: PrismaClient,
  data: {
    id: string;
    tokenDigest: string;
    ownerUserId?: string;
    operatorUserId?: string;
    createdAt: Date;
    lastSeenAt: Date;
    expiresAt: Date;
  },
): Promise<SessionRow> {
  return prisma.dashboardSession.create({ data });
}

export function findSessionByDigest(
  prisma: PrismaClient,
  tokenDigest: string,
): Promise<SessionRow | null> {
  return prisma.dashboardSession.findUnique({ where: { tokenDigest } });
}

export async function deleteSession(prisma: PrismaClient, id: string): Promise<void> {
  await prisma.dashboardSession.deleteMany({ where: { id } });
}

export async function touchSession(prisma: PrismaClient, id: string, at: Date): Promise<void> {
  await prisma.dashboardSession.updateMany({ where: { id }, data: { lastSeenAt: at } });
}

export async function deleteSessionByDigest(
  prisma: PrismaClient,
  tokenDigest: string,
): Promise<void> {
  await prisma.dashboardSession.deleteMany({ where: { tokenDigest } });
}

export async function deleteSessionsOfOwner(
  prisma: PrismaClient,
  ownerUserId: string,
): Promise<void> {
  await prisma.dashboardSession.deleteMany({ where: { ownerUserId } });
}

/** Deletes sessions past their end, or last seen at or before `idleSince`; how many. */
export async function deleteEndedSessions(
  prisma: PrismaClient,
  now: Date,
  idleSince: Date,
): Promise<number> {
  const { count } = await prisma.dashboardSession.deleteMany({
    where: { OR: [{ expiresAt: { lte: now } }, { lastSeenAt: { lte: idleSince } }] },
  });
  return count;
}

export function findOwnerWithAccount(prisma: PrismaClient, id: string) {
  return prisma.ownerUser.findUnique({
    where: { id },
    include: { account: { select: { id: true, name: true } } },
  });
}

export function findOperator(prisma: PrismaClient, id: string) {
  return prisma.operatorUser.findUnique({ where: { id } });
}

// ----------------------------------------------------------------------------- scoped tokens

/** Newest first, a keyset page after the token `afterId` (the account's own). */
export function listScopedTokens(
  prisma: PrismaClient,
  accountId: string,
  limit: number,
  afterId: string | null,
): Promise<ScopedTokenRow[]> {
  return prisma.scopedToken.findMany({
    where: { accountId },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit,
    ...(afterId ? { cursor: { id: afterId }, skip: 1 } : {}),
  });
}

export function findScopedToken(
  prisma: PrismaClient,
  accountId: string,
  id: string,
): Promise<ScopedTokenRow | null> {
  return prisma.scopedToken.findFirst({ where: { id, accountId } });
}

/** Sets `revoked_at` unless already set (the first revocation's time stays). */
export async function revokeScopedToken(
  prisma: PrismaClient,
  accountId: string,
  id: string,
  at: Date,
): Promise<void> {
  await prisma.scopedToken.updateMany({
    where: { id, accountId, revokedAt: null },
    data: { revokedAt: at },
  });
}

// ---------------------------------------------------------------------------- sign-in limits

/**
 * Takes a point from the email's window (a new window when the last one ended), granted while
 * fewer than `perHour` are taken: one upsert, so concurrent attempts queue on the row lock.
 */
export async function takeSignInPoint(
  pool: pg.Pool,
  input: { emailDigest: string; now: Date; newWindowEndsAt: Date; perHour: number },
): Promise<{ granted: boolean; window_ends_at: Date } | undefined> {
  const { rows } = await pool.query<{ granted: boolean; window_ends_at: Date }>(
    `INSERT INTO dashboard_sign_in_limits AS l (email_digest, points, granted, window_ends_at)
     VALUES ($1, 1, true, $3)
     ON CONFLICT (email_digest) DO UPDATE SET
       points = CASE WHEN l.window_ends_at <= $2 THEN 1
                     WHEN l.points < $4 THEN l.points + 1
                     ELSE l.points END,
       granted = l.window_ends_at <= $2 OR l.points < $4,
       window_ends_at = CASE WHEN l.window_ends_at <= $2 THEN $3 ELSE l.window_ends_at END
     RETURNING granted, window_ends_at`,
    [input.emailDigest, input.now, input.newWindowEndsAt, input.perHour],
  );
  return rows[0];
}

/** Gives a point back to its window (not to a newer one). */
export async function giveBackSignInPoint(
  pool: pg.Pool,
  emailDigest: string,
  windowEndsAt: Date,
): Promise<void> {
  await pool.query(
    `UPDATE dashboard_sign_in_limits SET points = points - 1
     WHERE email_digest = $1 AND window_ends_at = $2 AND points > 0`,
    [emailDigest, windowEndsAt],
  );
}

/** Deletes windows that ended; returns how many. */
export async function deleteEndedSignInWindows(pool: pg.Pool, now: Date): Promise<number> {
  const { rowCount } = await pool.query(
    'DELETE FROM dashboard_sign_in_limits WHERE window_ends_at <= $1',
    [now],
  );
  return rowCount ?? 0;
}

// --------------------------------------------------------------------------------- overview

/**
 * What settlements cost the account since `dayStart` and since `monthStart` (µDZD): its
 * customer entries of `hold_settlement` transactions, one indexed range scan
 * (`ledger_entries (account_id, created_at)`) from the month's start.
 */
export async function settlementSpend(
  prisma: PrismaClient,
  accountId: string,
  dayStart: Date,
  monthStart: Date,
): Promise<{ today: bigint; month: bigint }> {
  const [spend] = await prisma.$queryRaw<{ today: bigint | null; month: bigint | null }[]>`
    SELECT (-SUM(e.amount_micro_dzd) FILTER (WHERE e.created_at >= ${dayStart}))::bigint AS today,
           (-SUM(e.amount_micro_dzd))::bigint AS month
      FROM ledger_entries e
      JOIN ledger_transactions t ON t.id = e.transaction_id
     WHERE e.account_id = ${accountId}
       AND e.ledger_account = ${`customer:${accountId}`}
       AND e.created_at >= ${monthStart}
       AND t.kind = 'hold_settlement'`;
  return { today: spend?.today ?? 0n, month: spend?.month ?? 0n };
}
