/**
 * Budgets per API key and per scoped token: setting, reading and removing
 * them. Enforcement is not here: admission checks and reserves in its one statement
 * (prisma/functions/billing_admit_v3.sql) and the holds_budget_end trigger releases and counts.
 */
import {
  GatewayError,
  dzdToMicroDzd,
  microDzdToWire,
  microDzdToDzd,
  type BudgetList,
  type BudgetPutRequest,
  type BudgetView,
} from '@gateway/contracts';
import { newId } from '../identity/secrets.js';
import type { Clock } from '../identity/types.js';
import type { BudgetOwner, BudgetRepository, BudgetRow } from './budget-repository.js';

/** Budgets listed per account, at most (an account has a handful of keys and tokens). */
export const MAX_BUDGETS_LISTED = 1_000;

export function budgetView(row: BudgetRow): BudgetView {
  const remaining = row.limitMicroDzd - row.spentMicroDzd - row.reservedMicroDzd;
  const remainingMicroDzd = remaining > 0n ? remaining : 0n;
  return {
    object: 'budget',
    applies_to: row.apiKeyId !== null ? 'api_key' : 'scoped_token',
    owner: row.apiKeyId !== null ? (row.apiKeyName ?? '') : (row.scopedTokenId ?? ''),
    period: row.period,
    time_zone: row.timeZone,
    limit_dzd: microDzdToDzd(row.limitMicroDzd),
    spent_dzd: microDzdToDzd(row.spentMicroDzd),
    reserved_dzd: microDzdToDzd(row.reservedMicroDzd),
    remaining_dzd: microDzdToDzd(remainingMicroDzd),
    limit_micro_dzd: microDzdToWire(row.limitMicroDzd),
    spent_micro_dzd: microDzdToWire(row.spentMicroDzd),
    reserved_micro_dzd: microDzdToWire(row.reservedMicroDzd),
    remaining_micro_dzd: microDzdToWire(remainingMicroDzd),
    window_start: row.windowStart.toISOString(),
    resets_at: row.resetsAt?.toISOString() ?? null,
  };
}

/** The schema bounds the limit; a number's seventh decimal shows only when it is converted. */
function limitOf(limitDzd: number | string): bigint {
  try {
    return dzdToMicroDzd(limitDzd);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new GatewayError('invalid_request_body', `limit_dzd: ${error.message}`, {
      param: 'limit_dzd',
    });
  }
}

const notFound = (what: string) => new GatewayError('resource_not_found', `${what} not found`);

export class Budgets {
  constructor(
    private readonly repository: BudgetRepository,
    private readonly clock: Clock,
  ) {}

  private async keyOwner(accountId: string, keyName: string): Promise<BudgetOwner> {
    const apiKeyId = await this.repository.apiKeyId(accountId, keyName);
    if (apiKeyId === null) throw notFound(`API key '${keyName}' of account ${accountId}`);
    return { apiKeyId };
  }

  private async tokenOwner(accountId: string, tokenId: string): Promise<BudgetOwner> {
    if (!(await this.repository.scopedTokenExists(accountId, tokenId))) {
      // A client-minted token is registered by its first request; before that it has no id.
      throw notFound(`Scoped token ${tokenId} of account ${accountId}`);
    }
    return { scopedTokenId: tokenId };
  }

  private async put(accountId: string, owner: BudgetOwner, body: BudgetPutRequest) {
    const limitMicroDzd = limitOf(body.limit_dzd);
    if (limitMicroDzd <= 0n) {
      throw new GatewayError('invalid_request_body', 'limit_dzd must be more than 0', {
        param: 'limit_dzd',
      });
    }
    const timeZone = body.time_zone ?? 'UTC';
    if (!(await this.repository.knowsTimeZone(timeZone))) {
      throw new GatewayError('invalid_request_body', `Unknown time zone '${timeZone}'`, {
        param: 'time_zone',
      });
    }
    const row = await this.repository.put(
      accountId,
      owner,
      { id: newId('bdg'), limitMicroDzd, period: body.period, timeZone },
      this.clock(),
    );
    return budgetView(row);
  }

  async putForKey(accountId: string, keyName: string, body: BudgetPutRequest): Promise<BudgetView> {
    return this.put(accountId, await this.keyOwner(accountId, keyName), body);
  }

  async putForToken(
    accountId: string,
    tokenId: string,
    body: BudgetPutRequest,
  ): Promise<BudgetView> {
    return this.put(accountId, await this.tokenOwner(accountId, tokenId), body);
  }

  private async get(owner: BudgetOwner, what: string): Promise<BudgetView> {
    const row = await this.repository.find(owner, this.clock());
    if (row === null) throw notFound(`Budget of ${what}`);
    return budgetView(row);
  }

  async getForKey(accountId: string, keyName: string): Promise<BudgetView> {
    return this.get(await this.keyOwner(accountId, keyName), `API key '${keyName}'`);
  }

  async getForToken(accountId: string, tokenId: string): Promise<BudgetView> {
    return this.get(await this.tokenOwner(accountId, tokenId), `scoped token ${tokenId}`);
  }

  private async remove(owner: BudgetOwner, what: string): Promise<void> {
    if (!(await this.repository.remove(owner))) throw notFound(`Budget of ${what}`);
  }

  async removeForKey(accountId: string, keyName: string): Promise<void> {
    await this.remove(await this.keyOwner(accountId, keyName), `API key '${keyName}'`);
  }

  async removeForToken(accountId: string, tokenId: string): Promise<void> {
    await this.remove(await this.tokenOwner(accountId, tokenId), `scoped token ${tokenId}`);
  }

  async list(accountId: string): Promise<BudgetList> {
    const rows = await this.repository.listForAccount(accountId, this.clock(), MAX_BUDGETS_LISTED);
    return { object: 'list', data: rows.map(budgetView) };
  }

  /** The budgets that apply to a caller: its key's, and its token's when it is a token. */
  async forCaller(
    accountId: string,
    keyName: string,
    tokenId: string | null,
  ): Promise<BudgetView[]> {
    const now = this.clock();
    const apiKeyId = await this.repository.apiKeyId(accountId, keyName);
    const rows = await Promise.all([
      apiKeyId === null ? null : this.repository.find({ apiKeyId }, now),
      tokenId === null ? null : this.repository.find({ scopedTokenId: tokenId }, now),
    ]);
    return rows.filter((row): row is BudgetRow => row !== null).map(budgetView);
  }
}
