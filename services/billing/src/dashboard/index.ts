import type { PrismaClient } from '../db/client.js';
import { systemClock, type Clock } from '../identity/types.js';
import type { ScryptParams } from './passwords.js';
import { DashboardScopedTokens } from './scoped-tokens.js';
import { DashboardSessions, type SessionTimings } from './sessions.js';
import { DashboardUsers } from './users.js';

export interface DashboardOptions {
  prisma: PrismaClient;
  clock?: Clock;
  session?: Partial<SessionTimings>;
  invitationTtlMs?: number;
  scrypt?: ScryptParams;
}

/** The dashboard's users and sessions (issue 16), owned by billing. */
export interface Dashboard {
  clock: Clock;
  sessions: DashboardSessions;
  users: DashboardUsers;
  scopedTokens: DashboardScopedTokens;
}

const DASHBOARD_DEFAULTS = {
  sessionIdleMs: 30 * 60_000,
  sessionMaxMs: 12 * 3_600_000,
  invitationTtlMs: 72 * 3_600_000,
} as const;

export function createDashboard(options: DashboardOptions): Dashboard {
  const clock = options.clock ?? systemClock;
  const sessions = new DashboardSessions(options.prisma, clock, {
    idleMs: options.session?.idleMs ?? DASHBOARD_DEFAULTS.sessionIdleMs,
    maxMs: options.session?.maxMs ?? DASHBOARD_DEFAULTS.sessionMaxMs,
  });
  const users = new DashboardUsers({
    prisma: options.prisma,
    clock,
    sessions,
    invitationTtlMs: options.invitationTtlMs ?? DASHBOARD_DEFAULTS.invitationTtlMs,
    ...(options.scrypt ? { scrypt: options.scrypt } : {}),
  });
  const scopedTokens = new DashboardScopedTokens(options.prisma, clock);
  return { clock, sessions, users, scopedTokens };
}
