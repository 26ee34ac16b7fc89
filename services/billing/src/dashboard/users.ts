import {
  GatewayError,
  OPERATOR_ROLES,
  type DashboardStartedSession,
  type OperatorRole,
  type OperatorUser,
} from '@gateway/contracts';
import type { PrismaClient } from '../db/client.js';
import type { Clock } from '../identity/types.js';
import type { PasswordWork } from './password-work.js';
import * as repo from './dashboard-repository.js';
import type { DashboardSessions } from './sessions.js';
import {
  newPassword,
  newSecretToken,
  newUserId,
  normalEmail,
  presentedToken,
  tokenDigest,
} from './tokens.js';

export interface CreatedInvitation {
  id: string;
  accountId: string;
  email: string;
  /** Shown once; only its SHA-256 is stored. */
  token: string;
  expiresAt: Date;
}

export interface DashboardUsersOptions {
  prisma: PrismaClient;
  clock: Clock;
  sessions: DashboardSessions;
  /** How long an invitation link works (DASHBOARD_INVITATION_TTL_MS). */
  invitationTtlMs: number;
  /** The bulkhead every password hash runs in. */
  passwords: PasswordWork;
}

const badInvitation = () =>
  new GatewayError('invalid_invitation', 'This invitation is unknown, already used or expired');

/**
 * Account owners (invited by an operator, one account each) and operator users (created by
 * `gatewayctl`). An invitation is a one-time token: accepting it sets the owner's password (a
 * first one, or a new one: an operator can re-invite an owner who lost theirs, which also ends
 * the owner's sessions) and signs them in.
 */
export class DashboardUsers {
  constructor(private readonly options: DashboardUsersOptions) {}

  async invite(accountId: string, email: unknown): Promise<CreatedInvitation> {
    const { prisma, clock, invitationTtlMs } = this.options;
    const address = normalEmail(email);
    if (!(await repo.accountExists(prisma, accountId))) {
      throw new GatewayError('resource_not_found', `Account '${accountId}' not found`);
    }
    await this.#assertEmailFreeFor(accountId, address);
    const token = newSecretToken();
    const now = clock();
    const row = await repo.createInvitation(prisma, {
      id: newUserId('inv'),
      accountId,
      email: address,
      tokenDigest: tokenDigest(token),
      createdAt: now,
      expiresAt: new Date(now.getTime() + invitationTtlMs),
    });
    return { id: row.id, accountId, email: address, token, expiresAt: row.expiresAt };
  }

  /**
   * Uses the invitation (once), sets the owner's password, and starts a session. The token is
   * checked before the password is hashed: an unknown, used or expired one costs one indexed
   * read, never a hash (the transaction below checks it again, atomically, to use it once).
   */
  async accept(token: unknown, password: unknown): Promise<DashboardStartedSession> {
    const { prisma, clock, sessions, passwords } = this.options;
    const digest = tokenDigest(presentedToken(token));
    const chosen = newPassword(password);
    if (!(await repo.openInvitationExists(prisma, digest, clock()))) throw badInvitation();
    const hash = await passwords.run(() => passwords.hash(chosen));
    const ownerId = await repo.useInvitation(prisma, {
      tokenDigest: digest,
      passwordHash: hash,
      now: clock(),
      newOwnerId: newUserId('own'),
    });
    if (ownerId === null) throw badInvitation();
    await sessions.endAllOf(ownerId);
    return sessions.start({ kind: 'owner', id: ownerId });
  }

  async createOperator(input: {
    email: unknown;
    role: unknown;
    password: unknown;
  }): Promise<OperatorUser> {
    const email = normalEmail(input.email);
    if (!OPERATOR_ROLES.includes(input.role as OperatorRole)) {
      throw new GatewayError(
        'invalid_request_body',
        `role must be one of ${OPERATOR_ROLES.join(', ')}`,
        {
          param: 'role',
        },
      );
    }
    const role = input.role as OperatorRole;
    const { passwords } = this.options;
    const chosen = newPassword(input.password);
    const passwordHash = await passwords.run(() => passwords.hash(chosen));
    const existing = await repo.findOperatorByEmail(this.options.prisma, email);
    if (existing) throw new GatewayError('conflict', `Operator user '${email}' already exists`);
    const row = await repo.createOperator(this.options.prisma, {
      id: newUserId('opu'),
      email,
      role,
      passwordHash,
      createdAt: this.options.clock(),
    });
    return {
      id: row.id,
      email: row.email,
      role: row.role,
      created_at: row.createdAt.toISOString(),
    };
  }

  /** Deletes invitations past their expiry (used or not); returns how many. */
  async purgeExpiredInvitations(): Promise<number> {
    return repo.deleteExpiredInvitations(this.options.prisma, this.options.clock());
  }

  async #assertEmailFreeFor(accountId: string, email: string): Promise<void> {
    const owner = await repo.findOwnerByEmail(this.options.prisma, email);
    if (owner && owner.accountId !== accountId) {
      throw new GatewayError('conflict', 'This email already owns another account', {
        param: 'email',
      });
    }
  }
}
