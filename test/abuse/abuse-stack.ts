import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import pg from 'pg';
import { createStandInModelNode, type StandInModelNode } from '@gateway/stand-ins';
import {
  brokerUserOf,
  createTestDatabase,
  fundAccount,
  gatewayServiceEntry,
  spawnService,
  startGateway,
  testServiceAmqpUrl,
  uniquePrefix,
  urlAsRole,
  waitForStatus,
  type OperatorCall,
  type ServiceProcess,
} from '@gateway/testing';
import {
  billingDatabaseTemplate,
  TEST_EDGE_ADMISSION_ROLE,
  TEST_WORKER_LEDGER_ROLE,
} from '../../services/billing/src/db/client.js';
import { dispatcherDatabaseTemplate } from '../../services/dispatcher/src/db/migrate.js';

/*
 * The deployed shape, as an attacker meets it: billing, the dispatcher, the inference worker and
 * edge as four processes over real PostgreSQL and RabbitMQ (each as its own broker user), a
 * stand-in model node behind them.
 * Tests talk to edge over raw HTTP (so they can send what no client library would) and read
 * billing's database directly to check that nothing was left behind.
 */

export const CHAT_MODEL = 'abuse/chat';
export const NATIVE_MODEL = 'abuse/tgi';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  elapsedMs: number;
}

export interface RawRequest {
  method?: string;
  /** Sent as is: the test controls every byte of the request target. */
  path: string;
  headers?: Record<string, string | number | string[]>;
  body?: string | Buffer;
  timeoutMs?: number;
}

export interface AbuseStack {
  edgeUrl: string;
  edgePort: number;
  adminToken: string;
  accountId: string;
  apiKey: string;
  /** A funded account's key that tests may spend with. */
  processes: Record<'billing' | 'dispatcher' | 'worker' | 'edge', ServiceProcess> & {
    dashboard?: ServiceProcess;
  };
  /** Every edge replica (`edgeReplicas`), `processes.edge` first. */
  edges: ServiceProcess[];
  /** Billing's internal API, called as edge (e.g. an admission no edge goes on with). */
  billingAsEdge<T>(method: string, route: string, body?: unknown): Promise<T>;
  node: StandInModelNode;
  send(request: RawRequest): Promise<RawAnswer>;
  /** A request to the process serving `/dashboard` (edge itself unless it has its own). */
  sendDashboard(request: RawRequest): Promise<RawAnswer>;
  admin: AdminCall;
  /** The same, for `fundAccount(stack.operator)`. */
  operator: OperatorCall;
  /** Every line every service wrote so far, joined. */
  allOutput(): string;
  /** Edge's access-log lines so far (only those of paths starting with `pathPrefix`). */
  edgeAccessLines(pathPrefix?: string): number;
  /**
   * Waits (up to 5 s) until edge has logged at least `count` access lines (of paths starting
   * with `pathPrefix`): services write their log in buffers of up to 200 ms, and a test that
   * greps the logs must see every request's line. A prefix keeps a late line of an earlier
   * test's request from standing in for one still in edge's buffer.
   */
  waitForEdgeAccessLines(count: number, pathPrefix?: string): Promise<number>;
  /** Paths billing was asked for (its access log). */
  billingPaths(): string[];
  pendingHolds(): Promise<number>;
  /** A read of billing's database (rows as node-postgres returns them). */
  billingQuery<Row extends Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<Row[]>;
  ledgerCheck(): Promise<{ ok: boolean; violations: unknown[] }>;
  close(): Promise<void>;
}

/** One HTTP/1.1 request over a fresh connection, any bytes allowed; never throws on status. */
export function rawRequest(port: number, options: RawRequest): Promise<RawAnswer> {
  const startedAt = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers,
        agent: false,
        insecureHTTPParser: true,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            elapsedMs: performance.now() - startedAt,
          }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(options.timeoutMs ?? 30_000, () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** Edge's admin API as the operator; `headers` are added (an Idempotency-Key). */
export type AdminCall = (
  method: string,
  route: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<RawAnswer>;

export function adminCaller(edgePort: number, adminToken: string): AdminCall {
  return (method, route, body, headers = {}) =>
    rawRequest(edgePort, {
      method,
      path: `/admin/v1${route}`,
      headers: {
        Authorization: `Bearer ${adminToken}`,
        'Content-Type': 'application/json',
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
}

/** The stand-in models' prices, DZD per million tokens. */
export const STAND_IN_PRICES = { input: 1_000, output: 2_000 } as const;

/** A chat and a TGI completion model, both served by the stand-in node at `nodeUrl`. */
export async function putStandInModels(
  admin: AdminCall,
  nodeUrl: string,
  ids: { chat: string; native: string },
): Promise<void> {
  const common = {
    provider: 'node',
    nodes: [{ url: nodeUrl }],
    max_output_tokens: 64,
    input_price_dzd_per_m: STAND_IN_PRICES.input,
    output_price_dzd_per_m: STAND_IN_PRICES.output,
  };
  for (const [id, model] of [
    [ids.chat, { ...common, kind: 'chat', upstream_model: 'stand-in' }],
    [ids.native, { ...common, kind: 'completion', protocol: 'tgi', upstream_model: 'm' }],
  ] as const) {
    const put = await admin('PUT', `/models/${id}`, model);
    if (put.status !== 200) throw new Error(`catalog: ${put.status} ${put.body}`);
  }
}

/** The operator API through edge, for `fundAccount`: JSON answers, an error status throws. */
export function operatorOf(admin: AdminCall): OperatorCall {
  return async <T>(
    method: string,
    route: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<T> => {
    const { status, body: text } = await admin(method, route, body, headers);
    if (status < 200 || status > 299) throw new Error(`${method} ${route}: ${status} ${text}`);
    return JSON.parse(text) as T;
  };
}

async function spawnReady(
  entry: string,
  env: NodeJS.ProcessEnv,
  niceness?: number,
): Promise<ServiceProcess> {
  const child = await spawnService({ entry, env, ...(niceness === undefined ? {} : { niceness }) });
  await waitForStatus(`${child.baseUrl}/readyz`, 200);
  return child;
}

/**
 * Deployed, the dashboard's pods have their own CPU limit and take nothing from edge's; on this
 * machine's shared cores, nice 10 (about a ninth of edge's weight when both want a core) is the
 * nearest stand-in. See `dashboardProcess`.
 */
const DASHBOARD_NICENESS = 10;

export async function startAbuseStack(
  options: {
    authFailuresPerMinute?: number;
    /** Given to every service (e.g. the `OTEL_*` variables). */
    env?: NodeJS.ProcessEnv;
    edgeEnv?: NodeJS.ProcessEnv;
    dispatcherEnv?: NodeJS.ProcessEnv;
    billingEnv?: NodeJS.ProcessEnv;
    workerEnv?: NodeJS.ProcessEnv;
    /** Edge processes serving the public and operator API (one by default). */
    edgeReplicas?: number;
    /**
     * As Kubernetes runs it: the dashboard in an edge process of its own (`EDGE_SURFACES`
     * dashboard, no broker credential nor operator token), the public and operator API in edge.
     * It runs at a lower CPU weight (nice 10), standing in for its pods' own CPU.
     */
    dashboardProcess?: boolean;
  } = {},
): Promise<AbuseStack> {
  const billingDb = await createTestDatabase(billingDatabaseTemplate);
  const dispatcherDb = await createTestDatabase(dispatcherDatabaseTemplate);
  const node = await createStandInModelNode({ answerTokensMin: 3, answerTokensMax: 6 });
  // Each service connects as its own broker user, with a deployment's permissions.
  const prefix = uniquePrefix('abuse');
  const gateway = await startGateway(
    {
      launch: ({ service, env }) => spawnReady(gatewayServiceEntry(service), env),
      amqp: (service) => ({
        AMQP_URL: testServiceAmqpUrl(brokerUserOf(service)),
        AMQP_PREFIX: prefix,
      }),
      databaseUrls: {
        billing: billingDb.runtimeUrl,
        dispatcher: dispatcherDb.runtimeUrl,
        workerLedger: urlAsRole(billingDb.url, TEST_WORKER_LEDGER_ROLE),
        edgeAdmission: urlAsRole(billingDb.url, TEST_EDGE_ADMISSION_ROLE),
      },
      edges: options.edgeReplicas ?? 1,
      ...(options.env && { common: options.env }),
    },
    {
      // Billing logs successful internal calls at debug: the path checks need every one.
      billing: { LOG_LEVEL: 'debug', ...options.billingEnv },
      dispatcher: options.dispatcherEnv ?? {},
      worker: options.workerEnv ?? {},
      edge: {
        REPLY_TIMEOUT_MS: '20000',
        AUTH_FAILURES_PER_MINUTE: String(options.authFailuresPerMinute ?? 100_000),
        ...(options.dashboardProcess ? { EDGE_SURFACES: 'api,admin' } : {}),
        ...options.edgeEnv,
      },
    },
  );
  const { billing, dispatcher, edges, secrets } = gateway;
  const [worker] = gateway.workers as [ServiceProcess];
  const edge = edges[0]!;
  const { adminToken, edgeToken } = secrets;
  const dashboard = options.dashboardProcess
    ? await spawnReady(
        gatewayServiceEntry('edge'),
        {
          ...gateway.environments.edge,
          EDGE_SURFACES: 'dashboard',
          AMQP_URL: '',
          ADMIN_TOKEN: '',
        },
        // Deployed, its pods have their own CPU (k8s/base/edge-dashboard.yaml); on this
        // machine's shared cores, a lower CPU weight stands in for that.
        DASHBOARD_NICENESS,
      )
    : undefined;
  const processes = { billing, dispatcher, worker, edge, ...(dashboard && { dashboard }) };
  const send = (request: RawRequest) => rawRequest(edge.port, request);
  const sendDashboard = (request: RawRequest) => rawRequest((dashboard ?? edge).port, request);
  const admin = adminCaller(edge.port, adminToken);
  await putStandInModels(admin, node.url, { chat: CHAT_MODEL, native: NATIVE_MODEL });
  const { accountId, apiKey } = await fundAccount(operatorOf(admin), {
    name: 'abuse',
    keyName: 'main',
    creditDzd: 5_000,
    credit: { reference: 'abuse suite', idempotencyKey: 'abuse-credit' },
  });

  const sql = new pg.Client({ connectionString: billingDb.url });
  await sql.connect();
  // An access line has the request and its response (pino-http); other lines that carry the
  // request (a warning logged while it ran) come earlier and must not be counted as one.
  const edgeAccessLines = (pathPrefix = '') =>
    edge.logs.filter((line) => {
      const url = (line.req as { url?: unknown } | undefined)?.url;
      return line.res && typeof url === 'string' && url.startsWith(pathPrefix);
    }).length;
  return {
    edgeUrl: edge.baseUrl,
    edgePort: edge.port,
    adminToken,
    accountId,
    apiKey,
    processes,
    edges,
    billingAsEdge: async <T>(method: string, route: string, body?: unknown) => {
      const response = await fetch(`${billing.baseUrl}/internal/v1${route}`, {
        method,
        headers: { 'X-Internal-Token': edgeToken, 'Content-Type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`billing ${method} ${route}: ${response.status} ${text}`);
      return JSON.parse(text) as T;
    },
    node,
    send,
    sendDashboard,
    admin,
    operator: operatorOf(admin),
    allOutput: () =>
      Object.values(processes)
        .map((child) => child.output())
        .join(''),
    edgeAccessLines,
    waitForEdgeAccessLines: async (count, pathPrefix) => {
      const deadline = Date.now() + 5_000;
      while (edgeAccessLines(pathPrefix) < count && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return edgeAccessLines(pathPrefix);
    },
    billingPaths: () =>
      billing.logs.flatMap((line) => {
        const url = (line.req as { url?: unknown } | undefined)?.url;
        return typeof url === 'string' ? [url] : [];
      }),
    pendingHolds: async () => {
      const { rows } = await sql.query<{ n: string }>(
        "SELECT count(*) AS n FROM holds WHERE status = 'pending'",
      );
      return Number(rows[0]!.n);
    },
    billingQuery: async <Row extends Record<string, unknown>>(text: string, values?: unknown[]) =>
      (await sql.query<Row>(text, values)).rows,
    ledgerCheck: async () => JSON.parse((await admin('GET', '/ledger/check')).body),
    close: async () => {
      // A replica a test killed answers stop() at once.
      const children = [...Object.values(processes), ...edges.slice(1)];
      await Promise.all(children.map((child) => child.stop('SIGTERM')));
      await sql.end();
      await node.close();
      await billingDb.drop();
      await dispatcherDb.drop();
    },
  };
}

/** Waits until no hold is pending (jobs the tests started have finished), within `timeoutMs`. */
export async function settledHolds(stack: AbuseStack, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let pending = await stack.pendingHolds();
  while (pending > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    pending = await stack.pendingHolds();
  }
  return pending;
}

/** prom-client's `nodejs_eventloop_lag_max_seconds` of the service at `port`, in ms. */
async function eventLoopLagMaxMs(port: number): Promise<number> {
  const answer = await rawRequest(port, { path: '/metrics', timeoutMs: 120_000 });
  const line = /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(answer.body);
  if (answer.status !== 200 || !line) throw new Error('edge /metrics has no event-loop lag');
  return Number(line[1]) * 1000;
}

/**
 * The longest edge held its event loop while `work` ran, as edge itself measured it: prom-client
 * samples the loop's delay (perf_hooks' monitorEventLoopDelay) and resets the histogram at each
 * scrape, so a scrape before and one after bracket the work. Unlike a probe's wall time, a busy
 * machine (other processes on both cores) barely moves it; a request that blocks the loop does.
 */
export async function eventLoopStallWhile<T>(
  stack: AbuseStack,
  work: () => Promise<T>,
): Promise<{ result: T; stallMs: number }> {
  await eventLoopLagMaxMs(stack.edgePort);
  const result = await work();
  return { result, stallMs: await eventLoopLagMaxMs(stack.edgePort) };
}

export interface ErrorShape {
  error: { message: string; type: string; code: string; param?: string };
}

/** The documented error body, or an exception saying what the body was instead. */
export function errorOf(answer: RawAnswer): ErrorShape['error'] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    throw new Error(`status ${answer.status} with a non-JSON body: ${answer.body.slice(0, 200)}`);
  }
  const error = (parsed as Partial<ErrorShape>).error;
  if (
    typeof error?.message !== 'string' ||
    error.type !== 'service_error' ||
    typeof error.code !== 'string'
  ) {
    throw new Error(
      `status ${answer.status} without the error shape: ${answer.body.slice(0, 200)}`,
    );
  }
  return error;
}

/** Bytes over a bare TCP connection (what no HTTP client would send); the answer as text. */
export function rawBytes(
  port: number,
  bytes: string | Buffer,
  timeoutMs = 30_000,
): Promise<RawAnswer> {
  const startedAt = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('timed out')));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({
        status,
        headers: {},
        body: rest.join('\r\n\r\n'),
        elapsedMs: performance.now() - startedAt,
      });
    });
    socket.write(bytes);
  });
}
