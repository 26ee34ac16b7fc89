import {
  microDzdToDzd,
  type LedgerEntry,
  type LedgerEntryPage,
  type OpenHoldList,
  type Statement,
  type StatementLine,
} from '@gateway/contracts';
import type { EntryPage, LedgerEntryView, LedgerStatement, OpenHolds } from '../ledger/index.js';

/*
 * The ledger's statement and entry pages as the operator API's contract names them: µDZD as
 * digit strings, instants as ISO 8601, snake_case. Written field by field so a field the
 * contract gains or loses is a compile error here, not a silent difference on the wire.
 */

export function openHoldsToWire(open: OpenHolds): OpenHoldList {
  return {
    object: 'list',
    data: open.holds.map((hold) => ({
      hold_id: hold.id,
      model: hold.model,
      amount_micro_dzd: hold.amountMicroDzd.toString(),
      priority: hold.priority,
      scoped_token_id: hold.scopedTokenId,
      published: hold.publishedAt !== null,
      created_at: hold.createdAt.toISOString(),
      expires_at: hold.expiresAt.toISOString(),
    })),
    has_more: open.hasMore,
    reserved_micro_dzd: open.reservedMicroDzd.toString(),
  };
}

export function statementToWire(statement: LedgerStatement): Statement {
  return {
    account_id: statement.accountId,
    from: statement.from.toISOString(),
    to: statement.to.toISOString(),
    opening_balance_micro_dzd: String(statement.openingBalanceMicroDzd),
    total_credits_micro_dzd: String(statement.totalCreditsMicroDzd),
    total_debits_micro_dzd: String(statement.totalDebitsMicroDzd),
    closing_balance_micro_dzd: String(statement.closingBalanceMicroDzd),
    lines: statement.lines.map((line): StatementLine => ({
      entry_id: String(line.entryId),
      transaction_id: line.transactionId,
      kind: line.kind,
      reference: line.reference,
      hold_id: line.holdId,
      created_at: line.createdAt.toISOString(),
      amount_micro_dzd: String(line.amountMicroDzd),
      balance_after_micro_dzd: String(line.balanceAfterMicroDzd),
    })),
  };
}

export function entryPageToWire(page: EntryPage): LedgerEntryPage {
  return { entries: page.entries.map(entryToWire), next_cursor: page.nextCursor };
}

function entryToWire(entry: LedgerEntryView): LedgerEntry {
  return {
    id: String(entry.id),
    transaction_id: entry.transactionId,
    kind: entry.kind,
    ledger_account: entry.ledgerAccount,
    account_id: entry.accountId,
    amount_micro_dzd: String(entry.amountMicroDzd),
    amount_dzd: microDzdToDzd(entry.amountMicroDzd),
    reference: entry.reference,
    hold_id: entry.holdId,
    created_at: entry.createdAt.toISOString(),
  };
}
