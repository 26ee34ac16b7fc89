/**
 * The check of the books: the ledger's invariants and every closed period recomputed, one
 * report for the operator API, the `billing_ledger_invariant_violations` gauge and the CLI.
 */
import type { LedgerCheck } from '@gateway/contracts';
import type { ClosedPeriods } from './closed-periods.js';

export async function checkBooks(
  ledger: { checkInvariants(): Promise<LedgerCheck> },
  periods: Pick<ClosedPeriods, 'violations'>,
  options: { latestPeriods?: number } = {},
): Promise<LedgerCheck> {
  const ledgerCheck = await ledger.checkInvariants();
  const violations = [...ledgerCheck.violations, ...(await periods.violations(options))];
  return { ok: violations.length === 0, violations };
}
