import { microDzdToDzd, type DashboardOverview } from '@gateway/contracts';
import type { PrismaClient } from '../db/client.js';
import type { AccountService, Clock } from '../identity/index.js';
import type { LedgerService } from '../ledger/index.js';
import { balanceToJson } from '../http/wire.js';
import { settlementSpend } from './dashboard-repository.js';

/**
 * The owner's overview: the balance projection plus what settlements cost today and this month
 * (UTC), summed from the customer's ledger entries of `hold_settlement` transactions
 * (dashboard-repository.ts: settlementSpend).
 */
export async function accountOverview(
  deps: { prisma: PrismaClient; ledger: LedgerService; accounts: AccountService },
  accountId: string,
  clock: Clock,
): Promise<DashboardOverview> {
  const now = clock();
  const account = await deps.accounts.get(accountId);
  const balance = await deps.ledger.getBalance(accountId);
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const spend = await settlementSpend(deps.prisma, accountId, day, month);
  return {
    account: { id: account.id, name: account.name, status: account.status },
    ...balanceToJson(balance),
    currency: 'DZD',
    spend_today_dzd: microDzdToDzd(spend.today),
    spend_month_dzd: microDzdToDzd(spend.month),
    as_of: now.toISOString(),
  };
}
