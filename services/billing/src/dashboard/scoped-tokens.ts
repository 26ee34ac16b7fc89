import {
  DASHBOARD_PAGE,
  GatewayError,
  microDzdToDzd,
  type DashboardScopedToken,
  type DashboardScopedTokenList,
  type ScopedTokenState,
} from '@gateway/contracts';
import type { PrismaClient } from '../db/client.js';
import type { Clock } from '../identity/index.js';
import { invalid, queryLimit } from '../ledger/validation.js';
import * as repo from './dashboard-repository.js';
import type { ScopedTokenRow } from './dashboard-repository.js';

export type { ScopedTokenRow } from './dashboard-repository.js';

/** `?limit=`: 1..100, the default when absent. */
export function dashboardPageSize(value: unknown): number {
  return queryLimit(value, DASHBOARD_PAGE.maxLimit, DASHBOARD_PAGE.defaultLimit);
}

/** Revoked wins over expired, expired over exhausted (nothing left under the limit). */
function stateOf(row: ScopedTokenRow, remaining: bigint | null, now: Date): ScopedTokenState {
  if (row.revokedAt !== null) return 'revoked';
  if (row.expiresAt <= now) return 'expired';
  return remaining === 0n ? 'exhausted' : 'valid';
}

export function scopedTokenToJson(row: ScopedTokenRow, now: Date): DashboardScopedToken {
  const limit = row.spendingLimitMicroDzd;
  const left = limit === null ? null : limit - row.spentMicroDzd - row.reservedMicroDzd;
  const remaining = left === null ? null : left > 0n ? left : 0n;
  return {
    id: row.id,
    api_key_name: row.apiKeyName,
    origin: row.origin,
    models: row.models.length === 0 ? null : row.models,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
    spending_limit_dzd: limit === null ? null : microDzdToDzd(limit),
    spent_dzd: microDzdToDzd(row.spentMicroDzd),
    remaining_dzd: remaining === null ? null : microDzdToDzd(remaining),
    state: stateOf(row, remaining, now),
  };
}

/**
 * The registry of an account's scoped tokens for its owner: a keyset page (newest first; the
 * cursor is the last id of the previous page, which must be the account's own) and revocation
 * by id. Revocation writes `revoked_at`, which authentication reads on every request.
 */
export class DashboardScopedTokens {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
  ) {}

  async list(accountId: string, query: { limit?: unknown; cursor?: unknown }) {
    const limit = dashboardPageSize(query.limit);
    const cursor = await this.#cursor(accountId, query.cursor);
    const rows = await repo.listScopedTokens(this.prisma, accountId, limit, cursor);
    const now = this.clock();
    const list: DashboardScopedTokenList = {
      object: 'list',
      data: rows.map((row) => scopedTokenToJson(row, now)),
      next_cursor: rows.length === limit ? rows[rows.length - 1]!.id : null,
    };
    return list;
  }

  /** Idempotent: a second revocation keeps the first time. Another account's id: 404. */
  async revoke(accountId: string, id: string): Promise<DashboardScopedToken> {
    const now = this.clock();
    await repo.revokeScopedToken(this.prisma, accountId, id, now);
    const row = await repo.findScopedToken(this.prisma, accountId, id);
    if (!row) throw new GatewayError('resource_not_found', 'Scoped token not found');
    return scopedTokenToJson(row, now);
  }

  async #cursor(accountId: string, value: unknown): Promise<string | null> {
    if (value === undefined) return null;
    const found =
      typeof value === 'string' && value.length <= 64
        ? await repo.findScopedToken(this.prisma, accountId, value)
        : null;
    if (!found) throw invalid('cursor', 'cursor is not valid');
    return found.id;
  }
}
