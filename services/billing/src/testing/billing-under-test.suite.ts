import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import pg from 'pg';
import type { InferenceJobPayload } from '@gateway/contracts';
import { listen, type RunningServer } from '@gateway/runtime';
import {
  createTestDatabase,
  urlAsRole,
  type FundedAccount,
  type OperatorCall,
} from '@gateway/testing';
import type { DashboardOptions } from '../dashboard/index.js';
import {
  billingDatabaseTemplate,
  TEST_EDGE_ADMISSION_ROLE,
  TEST_WORKER_LEDGER_ROLE,
} from '../db/client.js';
import { createTestBillingApp } from '../http/billing-api.suite.js';
import type { LedgerService } from '../ledger/index.js';

/*
 * The one way tests start billing: the real billing API, in this process on a loopback port,
 * over a throwaway database of its own (no stand-in for money), as edge and the worker reach it
 * in production. Edge's tests, the worker's and the end-to-end tests that want billing in process
 * (to read holds directly) start it here; billing's own API tests drive its app through supertest
 * instead (`startBillingApi`, http/billing-api.suite.ts). `fault` lets a test make billing fail
 * on purpose (a chaos hook in front of the real routes; the routes themselves are untouched).
 * `close()` fails the test when the ledger's invariants do not hold.
 */

export interface HoldView {
  id: string;
  status: string;
  amount: bigint;
  settled: bigint | null;
}

export interface BillingUnderTest {
  url: string;
  /** The database's owner URL (a test may read it directly, or run billing's consumer on it). */
  databaseUrl: string;
  /** Edge's credential on billing; `workerToken` is the worker's. */
  internalToken: string;
  workerToken: string;
  ledger: LedgerService;
  /** The path of every request billing received so far, in arrival order (its access log, in short). */
  paths: string[];
  /**
   * Every request billing answered, with the `X-Request-Id` it carried (if any); a batch call
   * once per item, under the request the item names.
   */
  received: { method: string; path: string; requestId: string | undefined }[];
  /** Requests whose handler returns true get a 503 instead of reaching billing. */
  fault: { fails?: (method: string, path: string) => boolean };
  /**
   * Calls billing's internal API directly (arranging a test; edge is not involved), as edge (as
   * the worker for a settlement); throws on a non-2xx answer.
   */
  call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<T>;
  /** Billing's operator API (`fundAccount(billing.operator)`). */
  operator: OperatorCall;
  hold(holdId: string): Promise<HoldView>;
  /** Every hold of an account, oldest first (a test that cannot know the hold id). */
  holdsOf(accountId: string): Promise<HoldView[]>;
  /** Journal transactions naming the hold (its settlement: at most one). */
  ledgerTransactionsOf(holdId: string): Promise<number>;
  /** Whether the hold's settlement was refunded (its answer reached nobody). */
  refunded(holdId: string): Promise<boolean>;
  /** The account's posted balance (credits − debits), µDZD. */
  postedBalance(accountId: string): Promise<bigint>;
  /** Billing's database as the worker's ledger role (ADR 0070), which may only end holds. */
  ledgerUrl: string;
  /** Billing's database as edge's admission role (ADR 0070), which may only admit API keys. */
  admissionUrl: string;
  /** Stops billing and drops its database; throws if the ledger's invariants were violated. */
  close(): Promise<void>;
}

export interface BillingTestOptions {
  /** The dashboard's clock and timings (e.g. to end sessions on cue). */
  dashboard?: Omit<DashboardOptions, 'prisma'>;
  /** 0: ledger entries are listed as soon as committed (default: after a safety delay). */
  entriesStableAfterMs?: number;
}

interface HoldRow {
  id: string;
  status: string;
  amount_micro_dzd: string;
  settled_amount_micro_dzd: string | null;
}

/**
 * A throwaway billing database, migrated (from the template of the current migrations), for
 * tests that run billing as a process of its own: its `url` (the owner's) and `runtimeUrl`.
 */
export const createBillingDatabase = () => createTestDatabase(billingDatabaseTemplate);

const holdView = (row: HoldRow): HoldView => ({
  id: row.id,
  status: row.status,
  amount: BigInt(row.amount_micro_dzd),
  settled: row.settled_amount_micro_dzd === null ? null : BigInt(row.settled_amount_micro_dzd),
});

const HOLD_COLUMNS = 'id, status, amount_micro_dzd, settled_amount_micro_dzd';

export async function startBilling(options: BillingTestOptions = {}): Promise<BillingUnderTest> {
  const paths: string[] = [];
  const received: BillingUnderTest['received'] = [];
  const fault: BillingUnderTest['fault'] = {};
  const recordAndFault: RequestHandler = (req, res, next) => {
    const { method, path } = req;
    paths.push(path);
    const header = req.get('X-Request-Id');
    // A batch call is recorded once per item, under the request the item names (its body is
    // parsed by the time the answer is sent).
    res.once('finish', () => {
      const items = (req.body as { items?: { requestId?: string }[] } | undefined)?.items;
      for (const item of Array.isArray(items) ? items : [{}]) {
        received.push({ method, path, requestId: item.requestId ?? header });
      }
    });
    if (fault.fails?.(method, path)) {
      res.status(503).json({
        error: { message: 'injected fault', type: 'service_error', code: 'service_unavailable' },
      });
      return;
    }
    next();
  };
  const built = await createTestBillingApp({
    ...options,
    maxConnections: 8,
    before: recordAndFault,
  });
  const { db, prisma, internalToken, workerToken, app } = built;
  const { ledger } = built.services;
  const server: RunningServer = await listen(app, '127.0.0.1', 0);
  const url = `http://127.0.0.1:${server.port}`;
  const call = billingCaller(url, internalToken, workerToken);

  // The hold reads go to the database as its owner, on a connection opened at the first read.
  let connected: Promise<pg.Client> | undefined;
  const sql = () =>
    (connected ??= (async () => {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      return client;
    })());
  const rowsOf = async <R extends pg.QueryResultRow>(text: string, values: unknown[]) =>
    (await (await sql()).query<R>(text, values)).rows;

  return {
    url,
    databaseUrl: db.url,
    ledgerUrl: urlAsRole(db.url, TEST_WORKER_LEDGER_ROLE),
    admissionUrl: urlAsRole(db.url, TEST_EDGE_ADMISSION_ROLE),
    internalToken,
    workerToken,
    ledger,
    paths,
    received,
    fault,
    call,
    operator: adminOperator(call),
    async hold(holdId) {
      const rows = await rowsOf<HoldRow>(`SELECT ${HOLD_COLUMNS} FROM holds WHERE id = $1`, [
        holdId,
      ]);
      return holdView(rows[0]!);
    },
    async holdsOf(accountId) {
      const rows = await rowsOf<HoldRow>(
        `SELECT ${HOLD_COLUMNS} FROM holds WHERE account_id = $1 ORDER BY created_at, id`,
        [accountId],
      );
      return rows.map(holdView);
    },
    async ledgerTransactionsOf(holdId) {
      const rows = await rowsOf<{ n: string }>(
        'SELECT count(*) AS n FROM ledger_transactions WHERE hold_id = $1',
        [holdId],
      );
      return Number(rows[0]!.n);
    },
    async refunded(holdId) {
      const rows = await rowsOf<{ refunded: boolean }>(
        'SELECT refunded_at IS NOT NULL AS refunded FROM holds WHERE id = $1',
        [holdId],
      );
      return rows[0]?.refunded === true;
    },
    async postedBalance(accountId) {
      const rows = await rowsOf<{ balance: string }>(
        `SELECT posted_credits_micro_dzd - posted_debits_micro_dzd AS balance
           FROM account_balances WHERE account_id = $1`,
        [accountId],
      );
      return BigInt(rows[0]!.balance);
    },
    async close() {
      const report = await ledger.checkInvariants();
      if (connected) await (await connected).end();
      await server.close(1_000);
      await prisma.$disconnect();
      await db.drop();
      if (!report.ok)
        throw new Error(`ledger invariants violated: ${report.violations.join('\n')}`);
    },
  };
}

/** A model in the catalog; prices in DZD per million tokens. */
export interface ModelSpec {
  kind?: string;
  provider?: 'node' | 'external';
  inputPrice?: number;
  outputPrice?: number;
  maxOutputTokens?: number;
}

export async function putModel(
  billing: Pick<BillingUnderTest, 'call'>,
  id: string,
  spec: ModelSpec = {},
) {
  await billing.call('PUT', `/admin/models/${id}`, {
    kind: spec.kind ?? 'chat',
    provider: spec.provider ?? 'node',
    upstream_model: id.split('/').pop(),
    input_price_dzd_per_m: spec.inputPrice ?? 1_000,
    output_price_dzd_per_m: spec.outputPrice ?? 2_000,
    max_output_tokens: spec.maxOutputTokens ?? 100,
  });
}

/** The account's balance as billing's internal API answers it (DZD). */
export async function balanceOf(billing: Pick<BillingUnderTest, 'call'>, accountId: string) {
  return billing.call<{ balance_dzd: number; reserved_dzd: number; available_dzd: number }>(
    'GET',
    `/accounts/${accountId}/balance`,
  );
}

/** The account's balance in µDZD. */
export async function balanceMicroDzd(
  billing: Pick<BillingUnderTest, 'call'>,
  accountId: string,
): Promise<bigint> {
  const balance = await balanceOf(billing, accountId);
  return BigInt(Math.round(balance.balance_dzd * 1_000_000));
}

type JobPricing = NonNullable<InferenceJobPayload['pricing']>;

/** Admits a job as edge does (`POST /admissions`): its hold, and the prices edge puts in the job. */
export async function admitHold(
  billing: Pick<BillingUnderTest, 'call'>,
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

/**
 * One chat request of `account` on `model`, admitted and settled as edge and the worker do (100
 * tokens in, 20 out), under `holdId` (its request id is `req_<holdId>`).
 */
export async function settledRequest(
  billing: Pick<BillingUnderTest, 'call'>,
  account: FundedAccount,
  model: string,
  holdId: string,
): Promise<void> {
  await billing.call('POST', '/admissions', {
    authorization: `Bearer ${account.apiKey}`,
    holdId,
    model,
    estimate: { inputTokens: 100, maxOutputTokens: 50, choices: 1 },
    priority: false,
    endpoint: 'chat.completions',
    requestId: `req_${holdId}`,
  });
  await billing.call('POST', `/holds/${holdId}/settle`, {
    inputTokens: 100,
    outputTokens: 20,
    startedAtMs: Date.now(),
    generationMs: 50,
  });
}

/**
 * Calls billing's internal API as edge (as the worker for the worker's routes), each call under
 * a fresh Idempotency-Key unless `headers` name one; resolves with the JSON answer (`{}` when
 * empty), throws on an error status. Also for a billing started otherwise (a process).
 */
export function billingCaller(url: string, internalToken: string, workerToken: string) {
  return async <T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> => {
    const response = await fetch(`${url}/internal/v1${path}`, {
      method,
      headers: {
        'X-Internal-Token': isWorkerCall(path) ? workerToken : internalToken,
        'Content-Type': 'application/json',
        'Idempotency-Key': randomUUID(),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`billing ${method} ${path}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as T;
  };
}

/** Billing's operator API (`/admin` on its internal API) through `call`, for `fundAccount`. */
export function adminOperator(call: ReturnType<typeof billingCaller>): OperatorCall {
  return (method, path, body, headers) => call(method, `/admin${path}`, body, headers);
}

/** Settling is the worker's call alone: a test arranging a settlement calls as the worker. */
const isWorkerCall = (path: string): boolean => /^\/holds\/[^/]+\/settle$/.test(path);
