import type pg from 'pg';
import { GatewayError } from '@gateway/contracts';
import type { Clock } from '../identity/types.js';
import { sha256Hex } from '../identity/secrets.js';
import {
  deleteEndedSignInWindows,
  giveBackSignInPoint,
  takeSignInPoint,
} from './dashboard-repository.js';

const WINDOW_MS = 3_600_000;

/** A point taken for an email: what `giveBack` needs to return it to the same window. */
export interface SignInPoint {
  emailDigest: string;
  windowEndsAt: Date;
}

/**
 * Dashboard sign-ins per email, in PostgreSQL so that every edge and billing replica
 * shares one count. Before a password is checked, one statement takes a point from the email's
 * window (an hour from its first attempt): it is granted while fewer than `perHour` points are
 * taken, and the row lock of `INSERT … ON CONFLICT DO UPDATE` makes concurrent attempts queue
 * for it, so no more than `perHour` passwords are ever checked per window. A right password
 * gives its point back; a wrong one (or a check that failed) keeps it, so once `perHour` wrong
 * passwords were tried even the right one is refused (429) until the window ends. Emails are
 * kept as SHA-256 digests (an attacker's made-up addresses are not stored).
 */
export class SignInLimits {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    readonly perHour: number,
  ) {}

  /** Takes a point for `email` (lower-cased already), or throws 429 with `Retry-After`. */
  async take(email: string): Promise<SignInPoint> {
    const now = this.clock();
    const emailDigest = sha256Hex(email);
    const row = await takeSignInPoint(this.pool, {
      emailDigest,
      now,
      newWindowEndsAt: new Date(now.getTime() + WINDOW_MS),
      perHour: this.perHour,
    });
    if (!row) throw new Error('sign-in limit upsert returned no row');
    if (!row.granted) {
      const retryAfterS = Math.max(
        1,
        Math.ceil((row.window_ends_at.getTime() - now.getTime()) / 1000),
      );
      throw new GatewayError('rate_limit_exceeded', 'Too many failed sign-ins; retry later', {
        details: { retryAfterS },
      });
    }
    return { emailDigest, windowEndsAt: row.window_ends_at };
  }

  /** The password was right: the point goes back to its window (not to a newer one). */
  async giveBack(point: SignInPoint): Promise<void> {
    await giveBackSignInPoint(this.pool, point.emailDigest, point.windowEndsAt);
  }

  /** Deletes windows that ended; returns how many. */
  async purgeEnded(): Promise<number> {
    return deleteEndedSignInWindows(this.pool, this.clock());
  }
}
