/** Exit codes: what failed, so scripts can branch without parsing messages. */
export const EXIT = {
  ok: 0,
  /** The gateway refused the request (4xx): bad input, unknown account, conflict... */
  refused: 1,
  /** The command line itself is wrong. */
  usage: 2,
  /** The gateway could not be reached, timed out, or failed (5xx). */
  unavailable: 3,
  /** The admin token was missing or refused (401/403). */
  unauthorized: 4,
  /** `ledger check` found invariant violations. */
  violations: 5,
} as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export const usageError = (message: string): CliError => new CliError(message, EXIT.usage);
