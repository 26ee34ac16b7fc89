import { GatewayError } from '@gateway/contracts';
import { INSUFFICIENT_BALANCE_MESSAGE } from '@gateway/ledger-calls';

/**
 * Reading database failures raised through Prisma (driver adapter errors carry the SQLSTATE
 * in different places depending on the API used: `$queryRaw` → P2010 with
 * `meta.driverAdapterError.cause`; model API → the adapter error itself or its cause).
 */
interface Failure {
  sqlState: string | undefined;
  message: string;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)
    : undefined;
}

function sqlStateOf(candidate: Record<string, unknown> | undefined): string | undefined {
  const code = candidate?.originalCode ?? candidate?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export function databaseFailure(error: unknown): Failure {
  const top = record(error);
  const adapter = record(record(top?.meta)?.driverAdapterError);
  const candidates = [record(adapter?.cause), adapter, record(top?.cause), top];
  let sqlState: string | undefined;
  for (const candidate of candidates) {
    sqlState ??= sqlStateOf(candidate);
  }
  // Prisma's own codes for the same conditions.
  if (!sqlState && top?.code === 'P2034') sqlState = '40001';
  const messages = [top?.message, record(adapter?.cause)?.originalMessage].filter(
    (text): text is string => typeof text === 'string',
  );
  return { sqlState, message: messages.length > 0 ? messages.join('\n') : String(error) };
}

/** Deadlock or serialization failure: the whole transaction may be retried. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof GatewayError) return false;
  const { sqlState } = databaseFailure(error);
  return sqlState === '40P01' || sqlState === '40001';
}

export { INSUFFICIENT_BALANCE_MESSAGE };

/**
 * Maps the constraint violations the ledger relies on to client-visible errors; anything else
 * is returned unchanged (an internal error for the caller).
 */
export function mapDatabaseError(error: unknown): unknown {
  if (error instanceof GatewayError) return error;
  const { sqlState, message } = databaseFailure(error);
  if (sqlState === '23514' && message.includes('account_balances_available_nonnegative')) {
    return new GatewayError('insufficient_balance', INSUFFICIENT_BALANCE_MESSAGE, { cause: error });
  }
  if (sqlState === '22003') {
    return new GatewayError('invalid_request_body', 'Amount is out of range.', { cause: error });
  }
  return error;
}
