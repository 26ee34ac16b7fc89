/**
 * Ledger accounts (chart of accounts). Entries are signed: credit positive, debit negative.
 *
 * - `customer:<accountId>`: what the gateway owes one customer (a liability). Funding credits
 *   it, usage debits it; its balance is the customer's posted balance.
 * - `system:funding`: the counterpart of money received from customers (debited on each
 *   credit, so its balance is minus the total funded).
 * - `system:revenue`: earned usage (credited on each settlement).
 */
export const FUNDING_ACCOUNT = 'system:funding';
export const REVENUE_ACCOUNT = 'system:revenue';
export const CUSTOMER_PREFIX = 'customer:';

export function customerAccount(accountId: string): string {
  return `${CUSTOMER_PREFIX}${accountId}`;
}

/** One leg of a journal transaction. */
export interface Leg {
  ledgerAccount: string;
  /** Set on customer legs: the account the leg belongs to. */
  accountId: string | null;
  /** Signed µDZD. */
  amountMicroDzd: bigint;
}

/** Funding pays `amount` to the customer. */
export function creditLegs(accountId: string, amount: bigint): Leg[] {
  return [
    { ledgerAccount: FUNDING_ACCOUNT, accountId: null, amountMicroDzd: -amount },
    { ledgerAccount: customerAccount(accountId), accountId, amountMicroDzd: amount },
  ];
}

/** The customer pays `cost` of usage to revenue. A zero cost posts no legs. */
export function settlementLegs(accountId: string, cost: bigint): Leg[] {
  if (cost === 0n) return [];
  return [
    { ledgerAccount: customerAccount(accountId), accountId, amountMicroDzd: -cost },
    { ledgerAccount: REVENUE_ACCOUNT, accountId: null, amountMicroDzd: cost },
  ];
}

/** Throws unless the legs sum to zero (the database checks it too, per INSERT statement). */
export function assertBalanced(legs: readonly Leg[]): void {
  const total = legs.reduce((sum, leg) => sum + leg.amountMicroDzd, 0n);
  if (total !== 0n) throw new Error(`journal legs sum to ${total} µDZD, not zero`);
}
