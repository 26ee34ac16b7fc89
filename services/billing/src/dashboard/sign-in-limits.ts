import type pg from 'pg';
import { GatewayError } from '@gateway/contracts';
import type { Clock } from '../identity/types.js';
import { sha256Hex } from '../identity/secrets.js';

const WINDOW_MS = 3_600_000;

/** A point taken for an email: what `giveBack` needs to return it to the same window. */
export interface SignInPoint {
  emailDigest: string;
  windowEndsAt: Date;
}

/**
 * Dashboard sign-ins per email (issue 22), in PostgreSQL so that every edge and billing replica
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
    const { rows } = await this.pool.query<{ granted: boolean; window_ends_at: Date }>(
      `INSERT INTO dashboard_sign_in_limits AS l (email_digest, points, granted, window_ends_at)
       VALUES ($1, 1, true, $3)
       ON CONFLICT (email_digest) DO UPDATE SET
         points = CASE WHEN l.window_ends_at <= $2 THEN 1
                       WHEN l.points < $4 THEN l.points + 1
                       ELSE l.points END,
         granted = l.window_ends_at <= $2 OR l.points < $4,
         window_ends_at = CASE WHEN l.window_ends_at <= $2 THEN $3 ELSE l.window_ends_at END
       RETURNING granted, window_ends_at`,
      [emailDigest, now, new Date(now.getTime() + WINDOW_MS), this.perHour],
    );
    const row = rows[0];
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
    await this.pool.query(
      `UPDATE dashboard_sign_in_limits SET points = points - 1
       WHERE email_digest = $1 AND window_ends_at = $2 AND points > 0`,
      [point.emailDigest, point.windowEndsAt],
    );
  }

  /** Deletes windows that ended; returns how many. */
  async purgeEnded(): Promise<number> {
    const { rowCount } = await this.pool.query(
      'DELETE FROM dashboard_sign_in_limits WHERE window_ends_at <= $1',
      [this.clock()],
    );
    return rowCount ?? 0;
  }
}
