/**
 * The period report's reads, in one read-only REPEATABLE READ transaction: every figure comes
 * from the same snapshot, so the identities between them hold even while money moves. The
 * period's bounds are local midnights computed by PostgreSQL (its time zone database) from the
 * dates and the zone. Amounts come back as digit strings (exact bigint in TypeScript).
 */
import type pg from 'pg';
import { inPoolTransaction } from '@gateway/runtime';
import {
  anchorAt,
  entriesDigest,
  legsSinceAnchor,
  type Anchor,
  type EntriesDigest,
} from './period-repository.js';

export interface PeriodBounds {
  startsAt: Date;
  endsAt: Date;
}

export interface TrialBalanceRow {
  ledger_account: string;
  opening: string;
  debits: string;
  credits: string;
}

export interface RollForwardRow {
  account_id: string;
  name: string;
  status: string;
  opening: string;
  credits: string;
  usage: string;
  refunds: string;
  adjustments: string;
  closing: string;
}

export interface RevenueRow {
  day: string;
  model: string;
  priority: boolean;
  settlements: string;
  refunds: string;
  charged: string;
  refunded: string;
}

export interface OpenHoldsRow {
  count: string;
  reserved: string;
}

export interface PeriodRows {
  bounds: PeriodBounds;
  trialBalance: TrialBalanceRow[];
  /** Every customer account together (one row, account_id `*`). */
  liabilityTotal: RollForwardRow;
  /** One page, `limit + 1` rows at most (the caller tells whether there is more). */
  accounts: RollForwardRow[];
  revenue: RevenueRow[];
  openHolds: OpenHoldsRow;
  /** Asked by a close: the period's entries digest, in the same snapshot as the figures. */
  digest?: EntriesDigest;
}

export interface PeriodQuery {
  from: string;
  to: string;
  timeZone: string;
  limit: number;
  /** Account id after which the page starts. */
  after: string | null;
}

// Customer legs by transaction kind, per account, from the last close before the period (its
// balances are the `opening` legs); `closing` is summed apart so an entry of an unknown kind
// shows as a difference in the roll-forward instead of vanishing.
const PER_ACCOUNT = `
  SELECT e.account_id,
         COALESCE(sum(e.amount_micro_dzd) FILTER (WHERE e.created_at < $1), 0) AS opening,
         COALESCE(sum(e.amount_micro_dzd) FILTER (WHERE e.created_at >= $1 AND e.kind = 'credit'), 0) AS credits,
         COALESCE(-sum(e.amount_micro_dzd) FILTER (WHERE e.created_at >= $1 AND e.kind = 'hold_settlement'), 0) AS usage,
         COALESCE(sum(e.amount_micro_dzd) FILTER (WHERE e.created_at >= $1 AND e.kind = 'reversal'), 0) AS refunds,
         COALESCE(sum(e.amount_micro_dzd) FILTER (WHERE e.created_at >= $1 AND e.kind = 'adjustment'), 0) AS adjustments,
         COALESCE(sum(e.amount_micro_dzd), 0) AS closing
    FROM (${legsSinceAnchor({ period: 5, from: 6, to: 2 }, { kind: true })}) AS e
   WHERE e.ledger_account LIKE 'customer:%'
   GROUP BY e.account_id`;

const REPORT_WORK_MEM = '32MB';

const AS_TEXT = `opening::text, credits::text, usage::text, refunds::text, adjustments::text,
                 closing::text`;

export class ReportRepository {
  constructor(private readonly pool: pg.Pool) {}

  periodRows(query: PeriodQuery, options: { digest?: boolean } = {}): Promise<PeriodRows> {
    return inPoolTransaction(
      this.pool,
      async (client) => {
        // A month's entries joined to their transactions: hashed in memory instead of in
        // batches on disk (the default 4 MB). Per sort or hash, this transaction only.
        await client.query(`SET LOCAL work_mem = '${REPORT_WORK_MEM}'`);
        const bounds = await boundsOf(client, query);
        const range = [bounds.startsAt, bounds.endsAt];
        const anchor = await anchorAt(client, bounds.startsAt);
        return {
          bounds,
          trialBalance: await trialBalance(client, range, anchor),
          ...(await rollForward(client, range, anchor, query)),
          revenue: await revenue(client, range, query.timeZone),
          openHolds: await openHolds(client, bounds.endsAt),
          ...(options.digest
            ? { digest: await entriesDigest(client, bounds.startsAt, bounds.endsAt) }
            : {}),
        };
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  }
}

async function boundsOf(client: pg.PoolClient, query: PeriodQuery): Promise<PeriodBounds> {
  const { rows } = await client.query<{ starts_at: Date; ends_at: Date }>(
    `SELECT ($1::date)::timestamp AT TIME ZONE $3 AS starts_at,
            ($2::date + 1)::timestamp AT TIME ZONE $3 AS ends_at`,
    [query.from, query.to, query.timeZone],
  );
  return { startsAt: rows[0]!.starts_at, endsAt: rows[0]!.ends_at };
}

/** System accounts one by one; every customer account as one `customers` line. */
async function trialBalance(
  client: pg.PoolClient,
  range: Date[],
  anchor: Anchor,
): Promise<TrialBalanceRow[]> {
  const { rows } = await client.query<TrialBalanceRow>(
    `SELECT CASE WHEN ledger_account LIKE 'customer:%' THEN 'customers' ELSE ledger_account END
              AS ledger_account,
            COALESCE(sum(amount_micro_dzd) FILTER (WHERE created_at < $1), 0)::text AS opening,
            COALESCE(-sum(amount_micro_dzd) FILTER (WHERE created_at >= $1 AND amount_micro_dzd < 0), 0)::text AS debits,
            COALESCE(sum(amount_micro_dzd) FILTER (WHERE created_at >= $1 AND amount_micro_dzd > 0), 0)::text AS credits
       FROM (${legsSinceAnchor({ period: 3, from: 4, to: 2 }, { kind: false })}) AS legs
      GROUP BY 1 ORDER BY 1`,
    [...range, anchor.period, anchor.endsAt],
  );
  return rows;
}

/**
 * The customers' roll-forward in one pass over their entries: the page of accounts and the total
 * of all of them from the same per-account sums (the CTE is computed once).
 */
async function rollForward(
  client: pg.PoolClient,
  range: Date[],
  anchor: Anchor,
  query: PeriodQuery,
): Promise<Pick<PeriodRows, 'liabilityTotal' | 'accounts'>> {
  const { rows } = await client.query<RollForwardRow & { is_total: boolean }>(
    `WITH per_account AS MATERIALIZED (${PER_ACCOUNT})
     (SELECT false AS is_total, p.account_id, a.name, a.status::text AS status, ${AS_TEXT}
        FROM per_account p JOIN accounts a ON a.id = p.account_id
       WHERE $3::text IS NULL OR p.account_id > $3
       ORDER BY p.account_id LIMIT $4)
     UNION ALL
     SELECT true, '*', 'all customers', '',
            COALESCE(sum(opening), 0)::text, COALESCE(sum(credits), 0)::text,
            COALESCE(sum(usage), 0)::text, COALESCE(sum(refunds), 0)::text,
            COALESCE(sum(adjustments), 0)::text, COALESCE(sum(closing), 0)::text
       FROM per_account`,
    [...range, query.after, query.limit + 1, anchor.period, anchor.endsAt],
  );
  const strip = ({ is_total: _total, ...row }: RollForwardRow & { is_total: boolean }) => row;
  return {
    liabilityTotal: strip(rows.find((row) => row.is_total)!),
    accounts: rows.filter((row) => !row.is_total).map(strip),
  };
}

/**
 * Settlements and refunds by the holds they ended: a settlement's revenue leg is its hold's
 * settled amount, written at the hold's end (the invariant check proves both), so only the
 * period's holds are read (by `finalized_at`), not its entries joined to their transactions.
 * The report's revenue check compares the total with the revenue account's entries. Refunds on
 * the day they were given (`holds.refunded_at`, as the `finance_daily_revenue` view). A free
 * settlement has no revenue leg and is not counted, as in the entries.
 */
async function revenue(
  client: pg.PoolClient,
  range: Date[],
  timeZone: string,
): Promise<RevenueRow[]> {
  const { rows } = await client.query<RevenueRow>(
    `SELECT day, model, priority,
            count(*) FILTER (WHERE settlement)::text AS settlements,
            count(*) FILTER (WHERE NOT settlement)::text AS refunds,
            COALESCE(sum(charged), 0)::text AS charged,
            COALESCE(sum(refunded), 0)::text AS refunded
       FROM (
         SELECT to_char(h.finalized_at AT TIME ZONE $3, 'YYYY-MM-DD') AS day, h.model, h.priority,
                h.settled_amount_micro_dzd AS charged, 0::bigint AS refunded, true AS settlement
           FROM holds h
          WHERE h.status = 'settled' AND h.settled_amount_micro_dzd > 0
            AND h.finalized_at >= $1 AND h.finalized_at < $2
         UNION ALL
         SELECT to_char(h.refunded_at AT TIME ZONE $3, 'YYYY-MM-DD'), h.model, h.priority,
                0::bigint, h.settled_amount_micro_dzd, false
           FROM holds h
          WHERE h.refunded_at >= $1 AND h.refunded_at < $2
       ) AS movements
      GROUP BY day, model, priority ORDER BY day, model, priority`,
    [...range, timeZone],
  );
  return rows;
}

/** Holds placed before the end and not ended by it: reserved, not revenue. */
async function openHolds(client: pg.PoolClient, endsAt: Date): Promise<OpenHoldsRow> {
  const { rows } = await client.query<OpenHoldsRow>(
    `SELECT count(*)::text AS count, COALESCE(sum(amount_micro_dzd), 0)::text AS reserved
       FROM holds
      WHERE created_at < $1 AND (finalized_at IS NULL OR finalized_at >= $1)`,
    [endsAt],
  );
  return rows[0]!;
}
