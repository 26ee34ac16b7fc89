import {
  GatewayError,
  type DashboardSession,
  type DashboardStartedSession,
} from '@gateway/contracts';
import type { PrismaClient } from '../db/client.js';
import type { Clock } from '../identity/types.js';
import type { PasswordWork } from './password-work.js';
import * as repo from './dashboard-repository.js';
import type { SignInLimits } from './sign-in-limits.js';
import { csrfTokenOf, newSecretToken, newUserId, normalEmail, tokenDigest } from './tokens.js';

export type SessionUser = { kind: 'owner'; id: string } | { kind: 'operator'; id: string };

export interface SessionTimings {
  /** A session unused this long ends (DASHBOARD_SESSION_IDLE_MS). */
  idleMs: number;
  /** A session ends this long after sign-in, used or not (DASHBOARD_SESSION_MAX_MS). */
  maxMs: number;
}

// Use refreshes `last_seen_at` at most this often: one write a minute, not one per request.
const TOUCH_INTERVAL_MS = 60_000;

const noSession = () =>
  new GatewayError('session_required', 'Sign in to continue (no session, or it ended)');

/**
 * Dashboard sign-in and sessions. A session token is 32 random bytes known only to the browser's
 * httpOnly cookie; billing stores its SHA-256. It ends at sign-out, after `idleMs` unused, or
 * `maxMs` after sign-in, whichever comes first.
 */
export class DashboardSessions {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    readonly timings: SessionTimings,
    private readonly guards: { passwords: PasswordWork; signInLimits: SignInLimits },
  ) {}

  /**
   * 401 `invalid_credentials` for a wrong password and an unknown email alike (same work). In a
   * turn of the password bulkhead (503 when it is full, before anything else), the email's point
   * is taken first (429 when its window is used up: no hash), then the password checked; a right
   * one gives its point back.
   */
  async signIn(realm: 'owner' | 'operator', email: unknown, password: string) {
    const address = normalEmail(email);
    const { passwords, signInLimits } = this.guards;
    const user = await passwords.run(async () => {
      const point = await signInLimits.take(address);
      const found = await repo.findUserByEmail(this.prisma, realm, address);
      if (!(await passwords.verify(password, found?.passwordHash ?? null)) || !found) {
        throw new GatewayError('invalid_credentials', 'Wrong email or password');
      }
      await signInLimits.giveBack(point);
      return found;
    });
    return this.start({ kind: realm, id: user.id });
  }

  async start(user: SessionUser): Promise<DashboardStartedSession> {
    const token = newSecretToken();
    const now = this.clock();
    const row = await repo.createSession(this.prisma, {
      id: newUserId('ses'),
      tokenDigest: tokenDigest(token),
      ...(user.kind === 'owner' ? { ownerUserId: user.id } : { operatorUserId: user.id }),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + this.timings.maxMs),
    });
    return { token, session: await this.#view(row, token) };
  }

  /** The session of `token`, refreshed; 401 `session_required` when there is none (any more). */
  async resolve(token: string): Promise<DashboardSession> {
    const row = await repo.findSessionByDigest(this.prisma, tokenDigest(token));
    const now = this.clock().getTime();
    if (!row) throw noSession();
    if (row.expiresAt.getTime() <= now || row.lastSeenAt.getTime() + this.timings.idleMs <= now) {
      await repo.deleteSession(this.prisma, row.id);
      throw noSession();
    }
    if (now - row.lastSeenAt.getTime() >= TOUCH_INTERVAL_MS) {
      await repo.touchSession(this.prisma, row.id, new Date(now));
    }
    return this.#view(row, token);
  }

  /** Sign-out: idempotent. */
  async end(token: string): Promise<void> {
    await repo.deleteSessionByDigest(this.prisma, tokenDigest(token));
  }

  /** Ends every session of an owner (their password was set again). */
  async endAllOf(ownerUserId: string): Promise<void> {
    await repo.deleteSessionsOfOwner(this.prisma, ownerUserId);
  }

  /** Deletes ended sessions; returns how many. */
  async purgeEnded(): Promise<number> {
    const now = this.clock().getTime();
    return repo.deleteEndedSessions(
      this.prisma,
      new Date(now),
      new Date(now - this.timings.idleMs),
    );
  }

  async #view(
    row: { ownerUserId: string | null; operatorUserId: string | null; expiresAt: Date },
    token: string,
  ): Promise<DashboardSession> {
    const common = {
      csrf_token: csrfTokenOf(token),
      expires_at: row.expiresAt.toISOString(),
      idle_timeout_s: Math.floor(this.timings.idleMs / 1000),
    };
    if (row.ownerUserId !== null) {
      const owner = await repo.findOwnerWithAccount(this.prisma, row.ownerUserId);
      if (!owner) throw noSession();
      return {
        user: { id: owner.id, email: owner.email, role: 'owner' },
        account: owner.account,
        ...common,
      };
    }
    const operator = await repo.findOperator(this.prisma, row.operatorUserId ?? '');
    if (!operator) throw noSession();
    return {
      user: { id: operator.id, email: operator.email, role: operator.role },
      account: null,
      ...common,
    };
  }
}
