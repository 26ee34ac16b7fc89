/*
 * Errors that mean a dependency (PostgreSQL, through pg or Prisma) is unavailable for now, not
 * that the request or the code is wrong: a connection refused, reset or cut, a pool that could
 * not connect in time, a server shutting down or still starting, a standby that refuses writes
 * during a failover. They are answered 503 `service_unavailable` with `Retry-After`, which
 * clients retry, instead of 500.
 */

/** SQLSTATEs of a server going away, not accepting connections yet, or read-only (failover). */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '25006']);
/** Socket errors of a connection that could not be made or was cut. */
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTCONN',
]);
/** Prisma's codes for an unreachable server, a closed connection and a pool timeout. */
const UNAVAILABLE_PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** pg's and Prisma's own messages for the same, where they carry no code. */
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Server has closed the connection|Can't reach database server|Unable to start a transaction in the given time|Client has encountered a connection error/i;

/** How deep a chain of `cause`s is followed (drivers wrap each other's errors). */
const MAX_CAUSE_DEPTH = 5;

export function isDependencyUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current !== null; depth += 1) {
    if (typeof current !== 'object' || current === undefined) return false;
    const { code, errorCode, message, cause } = current as {
      code?: unknown;
      errorCode?: unknown;
      message?: unknown;
      cause?: unknown;
    };
    if (typeof code === 'string') {
      if (code.startsWith('08') && code.length === 5) return true;
      if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code)) return true;
      if (UNAVAILABLE_PRISMA_CODES.has(code)) return true;
    }
    if (typeof errorCode === 'string' && UNAVAILABLE_PRISMA_CODES.has(errorCode)) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return true;
    current = cause;
  }
  return false;
}
