import { microDzdToDzd, type DashboardOverview } from '@gateway/contracts';
import type { PrismaClient } from '../db/client.js';
import type { AccountService, Clock, PrismaTx } from '../identity/index.js';
import type { LedgerService } from '../ledger/index.js';
import { balanceToJson } from '../http/wire.js';

/**
 * The owner's overview: the balance projection plus what settlements cost today and this month
 * (UTC), summed from the customer's ledger entries of `hold_settlement` transactions. One indexed
 * range scan (`ledger_entries (account_id, created_at)`) from the month's start.
 */
export async function accountOverview(
  deps: { prisma: PrismaClient; ledger: LedgerService; accounts: AccountService<PrismaTx> },
  accountId: string,
  clock: Clock,
): Promise<DashboardOverview> {
  const now = clock();
  const account = await deps.accounts.get(accountId);
  const balance = await deps.ledger.getBalance(accountId);
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const [spend] = await deps.prisma.$queryRaw<{ today: bigint | null; month: bigint | null }[]>`
    SELECT (-SUM(e.amount_micro_dzd) FILTER (WHERE e.created_at >= ${day}))::bigint AS today,
           (-SUM(e.amount_micro_dzd))::bigint AS month
      FROM ledger_entries e
      JOIN ledger_transactions t ON t.id = e.transaction_id
     WHERE e.account_id = ${accountId}
       AND e.ledger_account = ${`customer:${accountId}`}
       AND e.created_at >= ${month}
       AND t.kind = 'hold_settlement'`;
  return {
    account: { id: account.id, name: account.name, status: account.status },
    ...balanceToJson(balance),
    currency: 'DZD',
    spend_today_dzd: microDzdToDzd(spend?.today ?? 0n),
    spend_month_dzd: microDzdToDzd(spend?.month ?? 0n),
    as_of: now.toISOString(),
  };
}
