import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { RequestHandler } from 'express';
import pg from 'pg';
import type { InferenceJobPayload } from '@gateway/contracts';
import { createLogger, createServiceMetrics } from '@gateway/observability';
import { createServiceApp, finishApp, listen } from '@gateway/runtime';
import { createTestDatabase, type FundedAccount, type OperatorCall } from '@gateway/testing';
import {
  billingDatabaseTemplate,
  createPrismaClient,
} from '../../services/billing/src/db/client.js';
import { mountBillingApi } from '../../services/billing/src/http/billing-app.js';
import { createTestBillingServices } from '../../services/billing/src/http/billing-services.suite.js';
import {
  adminOperator,
  billingCaller,
} from '../../services/edge/src/test-support/billing.suite.js';

// The internal API's caller is shared with edge's harness (one way to call billing in tests).
export { adminOperator, billingCaller };

/*
 * The real billing service, in process, over its own throwaway database: what edge and the
 * worker call in integration tests. `fault` lets a test make billing fail on purpose (a chaos
 * hook in front of the real routes; the routes themselves are untouched).
 */

const silent = new Writable({ write: (_c, _e, cb) => cb() });

export interface HoldView {
  id: string;
  status: string;
  amount: bigint;
  settled: bigint | null;
}

interface HoldRow {
  id: string;
  status: string;
  amount_micro_dzd: string;
  settled_amount_micro_dzd: string | null;
}

const holdView = (row: HoldRow): HoldView => ({
  id: row.id,
  status: row.status,
  amount: BigInt(row.amount_micro_dzd),
  settled: row.settled_amount_micro_dzd === null ? null : BigInt(row.settled_amount_micro_dzd),
});

const HOLD_COLUMNS = 'id, status, amount_micro_dzd, settled_amount_micro_dzd';

export interface BillingHarness {
  url: string;
  /** Edge's credential on billing; `workerToken` is the worker's. */
  internalToken: string;
  workerToken: string;
  databaseUrl: string;
  /** Calls billing's internal API; throws on a non-2xx answer. */
  call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
  /** Billing's operator API (`fundAccount(billing.operator)`). */
  operator: OperatorCall;
  /** Requests whose handler returns true get a 503 instead of reaching billing. */
  fault: { fails?: (method: string, path: string) => boolean };
  /** Every request billing received, with the `X-Request-Id` it carried (if any). */
  received: { method: string; path: string; requestId: string | undefined }[];
  hold(holdId: string): Promise<HoldView>;
  /** Every hold of an account, oldest first (a test that cannot know the hold id). */
  holdsOf(accountId: string): Promise<HoldView[]>;
  /** Journal transactions naming the hold (its settlement: at most one). */
  ledgerTransactionsOf(holdId: string): Promise<number>;
  /** Whether the hold's settlement was refunded (its answer reached nobody). */
  refunded(holdId: string): Promise<boolean>;
  /** The account's posted balance (credits − debits), µDZD. */
  postedBalance(accountId: string): Promise<bigint>;
  close(): Promise<void>;
}

export async function startBilling(): Promise<BillingHarness> {
  const db = await createTestDatabase(billingDatabaseTemplate);
  const prisma = createPrismaClient(db.runtimeUrl, { maxConnections: 8 });
  const services = createTestBillingServices(prisma);
  const internalToken = randomBytes(32).toString('hex');
  const workerToken = randomBytes(32).toString('hex');
  const logger = createLogger({ service: 'billing', destination: silent });
  const app = createServiceApp({
    logger,
    metrics: createServiceMetrics('billing', { defaultMetrics: false }),
    readiness: [],
    isShuttingDown: () => false,
  });
  const fault: BillingHarness['fault'] = {};
  const received: BillingHarness['received'] = [];
  const chaos: RequestHandler = (req, res, next) => {
    const { method, path } = req;
    const header = req.get('X-Request-Id');
    // A batch call is recorded once per item, under the request the item names (its body is
    // parsed by the time the answer is sent).
    res.once('finish', () => {
      const items = (req.body as { items?: { requestId?: string }[] } | undefined)?.items;
      for (const item of Array.isArray(items) ? items : [{}]) {
        received.push({ method, path, requestId: item.requestId ?? header });
      }
    });
    if (fault.fails?.(req.method, req.path)) {
      res.status(503).json({
        error: { message: 'injected fault', type: 'service_error', code: 'service_unavailable' },
      });
      return;
    }
    next();
  };
  app.use(chaos);
  mountBillingApi(app, services, { edge: internalToken, worker: workerToken });
  finishApp(app, logger);
  const server = await listen(app, '127.0.0.1', 0);
  const url = `http://127.0.0.1:${server.port}`;
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();

  const call = billingCaller(url, internalToken, workerToken);

  return {
    url,
    internalToken,
    workerToken,
    databaseUrl: db.url,
    call,
    operator: adminOperator(call),
    fault,
    received,
    async hold(holdId) {
      const { rows } = await sql.query<HoldRow>(`SELECT ${HOLD_COLUMNS} FROM holds WHERE id = $1`, [
        holdId,
      ]);
      return holdView(rows[0]!);
    },
    async holdsOf(accountId) {
      const { rows } = await sql.query<HoldRow>(
        `SELECT ${HOLD_COLUMNS} FROM holds WHERE account_id = $1 ORDER BY created_at, id`,
        [accountId],
      );
      return rows.map(holdView);
    },
    async ledgerTransactionsOf(holdId) {
      const { rows } = await sql.query<{ n: string }>(
        'SELECT count(*) AS n FROM ledger_transactions WHERE hold_id = $1',
        [holdId],
      );
      return Number(rows[0]!.n);
    },
    async refunded(holdId) {
      const { rows } = await sql.query<{ refunded: boolean }>(
        'SELECT refunded_at IS NOT NULL AS refunded FROM holds WHERE id = $1',
        [holdId],
      );
      return rows[0]?.refunded === true;
    },
    async postedBalance(accountId) {
      const { rows } = await sql.query<{ balance: string }>(
        `SELECT posted_credits_micro_dzd - posted_debits_micro_dzd AS balance
           FROM account_balances WHERE account_id = $1`,
        [accountId],
      );
      return BigInt(rows[0]!.balance);
    },
    async close() {
      const report = await services.ledger.checkInvariants();
      await sql.end();
      await server.close(1_000);
      await prisma.$disconnect();
      await db.drop();
      if (!report.ok)
        throw new Error(`ledger invariants violated: ${JSON.stringify(report.violations)}`);
    },
  };
}

export async function admitHold(
  billing: Pick<BillingHarness, 'call'>,
  account: FundedAccount,
  model: string,
  estimate: { inputTokens: number; maxOutputTokens?: number | null; choices?: number },
  priority = false,
): Promise<{ holdId: string; amountMicroDzd: bigint; pricing?: JobPricing }> {
  const admission = await billing.call<{
    hold: { id: string; amountMicroDzd: string };
    prices?: { inputMicroDzdPerM: string; outputMicroDzdPerM: string };
  }>('POST', '/admissions', {
    authorization: `Bearer ${account.apiKey}`,
    holdId: `hold-${randomUUID()}`,
    model,
    estimate: { maxOutputTokens: null, choices: 1, ...estimate },
    priority,
  });
  return {
    holdId: admission.hold.id,
    amountMicroDzd: BigInt(admission.hold.amountMicroDzd),
    // What edge puts in the job: the hold's prices and amount.
    ...(admission.prices
      ? { pricing: { ...admission.prices, holdMicroDzd: admission.hold.amountMicroDzd } }
      : {}),
  };
}

type JobPricing = NonNullable<InferenceJobPayload['pricing']>;

export async function balanceMicroDzd(billing: BillingHarness, accountId: string): Promise<bigint> {
  const balance = await billing.call<{ balance_dzd: number }>(
    'GET',
    `/accounts/${accountId}/balance`,
  );
  return BigInt(Math.round(balance.balance_dzd * 1_000_000));
}
