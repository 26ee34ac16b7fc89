import { pgPoolOf, type PrismaClient } from '../db/client.js';
import { systemClock, type Clock } from '../identity/types.js';
import type { ScryptParams } from './passwords.js';
import {
  DEFAULT_PASSWORD_WORK_LIMITS,
  PasswordWork,
  type PasswordWorkEvent,
  type PasswordWorkLimits,
} from './password-work.js';
import { DashboardScopedTokens } from './scoped-tokens.js';
import { DashboardSessions, type SessionTimings } from './sessions.js';
import { SignInLimits } from './sign-in-limits.js';
import { DashboardUsers } from './users.js';

export interface DashboardOptions {
  prisma: PrismaClient;
  clock?: Clock;
  session?: Partial<SessionTimings>;
  invitationTtlMs?: number;
  scrypt?: ScryptParams;
  /** Sign-ins per email and hour before 429 (`DASHBOARD_SIGN_IN_FAILURES_PER_HOUR`); 10. */
  signInFailuresPerHour?: number;
  /** The password bulkhead (`DASHBOARD_PASSWORD_HASHES_AT_ONCE`, `…_QUEUE`); 1 and 4. */
  passwordWork?: PasswordWorkLimits;
  /** Each hash and each refusal of the bulkhead (the service's metrics). */
  onPasswordWork?: (event: PasswordWorkEvent) => void;
}

/** The dashboard's users and sessions, owned by billing. */
export interface Dashboard {
  clock: Clock;
  sessions: DashboardSessions;
  users: DashboardUsers;
  scopedTokens: DashboardScopedTokens;
  /** Sign-ins per email. */
  signInLimits: SignInLimits;
  /** Every password hash runs here. */
  passwords: PasswordWork;
}

const DASHBOARD_DEFAULTS = {
  sessionIdleMs: 30 * 60_000,
  sessionMaxMs: 12 * 3_600_000,
  invitationTtlMs: 72 * 3_600_000,
  signInFailuresPerHour: 10,
} as const;

export function createDashboard(options: DashboardOptions): Dashboard {
  const clock = options.clock ?? systemClock;
  const passwords = new PasswordWork(
    options.passwordWork ?? DEFAULT_PASSWORD_WORK_LIMITS,
    options.scrypt,
    options.onPasswordWork,
  );
  const signInLimits = new SignInLimits(
    pgPoolOf(options.prisma),
    clock,
    options.signInFailuresPerHour ?? DASHBOARD_DEFAULTS.signInFailuresPerHour,
  );
  const sessions = new DashboardSessions(
    options.prisma,
    clock,
    {
      idleMs: options.session?.idleMs ?? DASHBOARD_DEFAULTS.sessionIdleMs,
      maxMs: options.session?.maxMs ?? DASHBOARD_DEFAULTS.sessionMaxMs,
    },
    { passwords, signInLimits },
  );
  const users = new DashboardUsers({
    prisma: options.prisma,
    clock,
    sessions,
    invitationTtlMs: options.invitationTtlMs ?? DASHBOARD_DEFAULTS.invitationTtlMs,
    passwords,
  });
  const scopedTokens = new DashboardScopedTokens(options.prisma, clock);
  return { clock, sessions, users, scopedTokens, signInLimits, passwords };
}
