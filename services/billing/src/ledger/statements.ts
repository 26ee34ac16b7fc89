/**
 * Finance exports: the paged entries listing (only entries older than the stability window,
 * so paging never skips one) and account statements (JSON and RFC 4180 CSV).
 */
import { GatewayError } from '@gateway/contracts';
import { decodeCursor, encodeCursor } from './cursor.js';
import { csvField, csvRow, csvTextField } from './csv.js';
import { microDzdToFixedDzd } from './money-format.js';
import type { LedgerStore } from './prisma-store.js';
import type { EntryPage, ListEntriesQuery, LedgerStatement, LedgerStatementLine } from './types.js';
import { requireDate, requireId, requireLimit, requireRange } from './validation.js';

export const MAX_ENTRIES_PAGE = 500;
const DEFAULT_ENTRIES_PAGE = 100;

export interface StatementDeps {
  store: LedgerStore;
  clock: () => Date;
  /** listEntries lists only entries older than now − this. */
  stableAfterMs: number;
  /** A longer statement is refused (ask for a shorter period). */
  statementMaxLines: number;
}

const optionalId = (param: string, value: string | undefined) =>
  value === undefined ? undefined : requireId(param, value);

export async function listEntriesWith(
  deps: StatementDeps,
  query: ListEntriesQuery = {},
): Promise<EntryPage> {
  const limit = requireLimit(query.limit, MAX_ENTRIES_PAGE, DEFAULT_ENTRIES_PAGE);
  const accountId = optionalId('account', query.accountId);
  const ledgerAccount = optionalId('ledgerAccount', query.ledgerAccount);
  const from = query.from === undefined ? undefined : requireDate('from', query.from);
  const requestedTo = query.to === undefined ? undefined : requireDate('to', query.to);
  if (from && requestedTo) requireRange(from, requestedTo);
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const through = new Date(deps.clock().getTime() - deps.stableAfterMs);
  const to = requestedTo && requestedTo < through ? requestedTo : through;
  const rows = await deps.store.selectEntries({
    ...(accountId === undefined ? {} : { accountId }),
    ...(ledgerAccount === undefined ? {} : { ledgerAccount }),
    ...(from === undefined ? {} : { from }),
    ...(after === undefined ? {} : { after }),
    to,
    limit: limit + 1,
  });
  const entries = rows.slice(0, limit);
  const last = entries[entries.length - 1];
  const nextCursor =
    rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null;
  return { entries, nextCursor, through: to };
}

export async function statementWith(
  deps: StatementDeps,
  accountId: string,
  range: { from: Date; to: Date },
): Promise<LedgerStatement> {
  requireId('accountId', accountId);
  const from = requireDate('from', range?.from);
  const to = requireDate('to', range?.to);
  requireRange(from, to);
  const { store, statementMaxLines } = deps;
  return store.snapshot(async (tx) => {
    if (!(await store.accountExists(accountId, tx))) {
      throw new GatewayError('resource_not_found', `Account ${accountId} does not exist.`);
    }
    const opening = await store.postedBalanceBefore(tx, accountId, from);
    const entries = await store.selectEntries(
      { accountId, from, to, limit: statementMaxLines + 1 },
      tx,
    );
    if (entries.length > statementMaxLines) {
      throw new GatewayError(
        'invalid_request_body',
        `The statement would have more than ${statementMaxLines} lines; ask for a shorter period.`,
        { param: 'from' },
      );
    }
    let running = opening;
    let credits = 0n;
    let debits = 0n;
    const lines: LedgerStatementLine[] = entries.map((entry) => {
      running += entry.amountMicroDzd;
      if (entry.amountMicroDzd > 0n) credits += entry.amountMicroDzd;
      else debits -= entry.amountMicroDzd;
      return {
        entryId: entry.id,
        transactionId: entry.transactionId,
        kind: entry.kind,
        reference: entry.reference,
        holdId: entry.holdId,
        createdAt: entry.createdAt,
        amountMicroDzd: entry.amountMicroDzd,
        balanceAfterMicroDzd: running,
      };
    });
    return {
      accountId,
      from,
      to,
      openingBalanceMicroDzd: opening,
      totalCreditsMicroDzd: credits,
      totalDebitsMicroDzd: debits,
      closingBalanceMicroDzd: running,
      lines,
    };
  });
}

export const STATEMENT_CSV_HEADER = [
  'date',
  'entry_id',
  'transaction_id',
  'kind',
  'hold_id',
  'reference',
  'amount_dzd',
  'balance_dzd',
] as const;

/**
 * RFC 4180 CSV of a statement: a header row, an `opening_balance` row at `from`, one row per
 * entry, a `closing_balance` row at `to`. Times in ISO 8601 UTC; DZD with exactly 6 decimals.
 */
export function statementToCsv(statement: LedgerStatement): string {
  const balanceRow = (kind: string, at: Date, balance: bigint) =>
    csvRow([at.toISOString(), '', '', kind, '', '', '', microDzdToFixedDzd(balance)]);
  let csv = csvRow(STATEMENT_CSV_HEADER);
  csv += balanceRow('opening_balance', statement.from, statement.openingBalanceMicroDzd);
  for (const line of statement.lines) {
    csv += csvRow([
      line.createdAt.toISOString(),
      line.entryId.toString(),
      csvField(line.transactionId),
      line.kind,
      csvField(line.holdId ?? ''),
      csvTextField(line.reference),
      microDzdToFixedDzd(line.amountMicroDzd),
      microDzdToFixedDzd(line.balanceAfterMicroDzd),
    ]);
  }
  csv += balanceRow('closing_balance', statement.to, statement.closingBalanceMicroDzd);
  return csv;
}
