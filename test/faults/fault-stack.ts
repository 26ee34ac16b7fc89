import path from 'node:path';
import pg from 'pg';
import { BROKER_SERVICES, brokerDefinitions } from '@gateway/messaging';
import { createStandInModelNode, type StandInModelNode } from '@gateway/stand-ins';
import {
  addTestBrokerUsers,
  brokerUserOf,
  createTestCertificates,
  createTestDatabase,
  freeLoopbackPort,
  fundAccount,
  skewableClock,
  startGateway,
  startTcpBalancer,
  startTestInfrastructure,
  TEST_ENV,
  TEST_PREFIX_PATTERN,
  testServiceAmqpUrl,
  uniquePrefix,
  urlAsRole,
  type GatewayEnv,
  type LaunchRequest,
  type OperatorCall,
  type PostgresWithStandby,
  type RabbitMqCluster,
  type TcpBalancer,
  type TestCertificates,
  type TestInfrastructure,
} from '@gateway/testing';
import {
  billingDatabaseTemplate,
  TEST_EDGE_ADMISSION_ROLE,
  TEST_WORKER_LEDGER_ROLE,
} from '../../services/billing/src/db/client.js';
import { dispatcherDatabaseTemplate } from '../../services/dispatcher/src/db/migrate.js';
import {
  startReceiver,
  type Receiver,
} from '../../services/dispatcher/src/testing/receiver.suite.js';
import {
  adminCaller,
  operatorOf,
  putStandInModels,
  STAND_IN_PRICES,
  type AdminCall,
} from '../abuse/abuse-stack.js';
import { FAULTS } from './fault-settings.js';
import { Service, type ServiceName } from './service.js';

export { Service, type ServiceName };

/*
 * The deployed shape for the fault suite: its own PostgreSQL cluster and RabbitMQ node (the
 * suite restarts them, so it cannot share the normal suite's), billing, the dispatcher, the
 * inference worker and edge (each as its own broker user) as processes from dist/ on fixed
 * loopback ports (a restarted service
 * comes back where its peers expect it), a stand-in model node and an HTTPS webhook receiver.
 */

export const LOG_DIR = path.resolve('.faults', 'logs');

export const CHAT_MODEL = 'faults/chat';
export const NATIVE_MODEL = 'faults/tgi';
/** DZD per million tokens = µDZD per token. */
export const PRICES = STAND_IN_PRICES;

export interface Lane {
  index: number;
  accountId: string;
  apiKey: string;
}

export interface FaultStack {
  infra: TestInfrastructure;
  /** The `ha` shape's broker cluster and PostgreSQL pair, the services behind their addresses. */
  brokerCluster?: RabbitMqCluster;
  postgresStandby?: PostgresWithStandby;
  /** The first process of each service (the only one unless replicas were asked for). */
  services: Record<ServiceName, Service>;
  /** Every process: the services and their replicas. */
  replicas: Service[];
  edges: Service[];
  workers: Service[];
  /**
   * With `proxied`: fault-injecting TCP proxies on the paths to billing (from edges and
   * workers), to billing's database from workers (their ledger role) and from edges (their
   * admission role, ADR 0070), to the model node (from workers) and to the workers' direct job
   * API (from edges, ADR 0072).
   */
  paths?: {
    billing: TcpBalancer;
    ledger: TcpBalancer;
    admission: TcpBalancer;
    model: TcpBalancer;
    jobs: TcpBalancer;
  };
  node: StandInModelNode;
  receiver: Receiver;
  lanes: Lane[];
  /** Where the services' logs are written (`.faults/logs/...`). */
  logDir: string;
  /** The billing database as its owner: the suite reads holds directly. */
  sql: pg.Pool;
  admin: AdminCall;
  /** The same, for `fundAccount(stack.operator)`. */
  operator: OperatorCall;
  webhookUrl(id: string): string;
  close(): Promise<void>;
}

interface Topology {
  edges: number;
  workers: number;
  /** The address edges and workers reach billing at (a proxy, or billing itself). */
  reachBilling(billingPort: number): string;
  /** The URL the worker reaches billing's database at (through a proxy, or directly). */
  reachLedger(databaseUrl: string): string;
  /** The URL edges reach billing's database at (through a proxy, or directly). */
  reachAdmission(databaseUrl: string): string;
  /** The URLs edges hand direct jobs to (a proxy over the workers, or each worker). */
  reachWorkers(workerPorts: number[]): string[];
  env: GatewayEnv;
  /** Where each process's movable clock keeps its offset; none when undefined. */
  clockDir?: string;
  logDir: string;
  supervised: boolean;
}

/**
 * The services, each a `Service` on a loopback port of its own (a restarted process comes back
 * where its peers expect it), started in dependency order: billing first, edges last.
 */
async function startServices(
  certs: TestCertificates,
  topology: Topology,
): Promise<{ replicas: Service[]; billingOwnerUrl: string }> {
  const billingDb = await createTestDatabase(billingDatabaseTemplate);
  const dispatcherDb = await createTestDatabase(dispatcherDatabaseTemplate);
  // Each service as its own broker user (created on this node by startFaultStack).
  const prefix = uniquePrefix('faults');
  const { clockDir, logDir, supervised } = topology;
  const launch = async ({ service, label, env }: LaunchRequest) => {
    const clock = clockDir ? skewableClock(path.join(clockDir, `${label}.clock`)) : undefined;
    const options = { label, logDir, supervised, ...(clock && { clock }) };
    const replica = new Service(service, await freeLoopbackPort(), env, options);
    await replica.start();
    return replica;
  };
  const gateway = await startGateway(
    {
      launch,
      amqp: (service) => ({
        AMQP_URL: testServiceAmqpUrl(brokerUserOf(service)),
        AMQP_PREFIX: prefix,
      }),
      databaseUrls: {
        billing: billingDb.runtimeUrl,
        dispatcher: dispatcherDb.runtimeUrl,
        workerLedger: topology.reachLedger(urlAsRole(billingDb.url, TEST_WORKER_LEDGER_ROLE)),
        edgeAdmission: topology.reachAdmission(urlAsRole(billingDb.url, TEST_EDGE_ADMISSION_ROLE)),
      },
      edges: topology.edges,
      workers: topology.workers,
      reachBilling: (billing) => topology.reachBilling(billing.port),
      reachWorkers: (workers) => topology.reachWorkers(workers.map((worker) => worker.port)),
      secrets: { adminToken: FAULTS.adminToken },
    },
    faultTimings(certs, topology.env),
  );
  return { replicas: gateway.all, billingOwnerUrl: billingDb.url };
}

/** The suite's short timings and its loopback receiver; `env` is added to each service's. */
function faultTimings(certs: TestCertificates, env: GatewayEnv): GatewayEnv {
  return {
    billing: {
      // Orphaned holds (edge died before publishing) are released within seconds, not 30 s.
      HOLD_PUBLISH_GRACE_MS: String(FAULTS.holdPublishGraceMs),
      HOLD_SWEEP_INTERVAL_MS: String(FAULTS.holdSweepIntervalMs),
      ...env.billing,
    },
    dispatcher: {
      DISPATCH_INTERVAL_MS: '200',
      RETRY_SCHEDULE_A_MS: '0,500,1000,2000,4000',
      ATTEMPT_TIMEOUT_MS: '3000',
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      WEBHOOK_CA_FILE: certs.caFile,
      ...env.dispatcher,
    },
    worker: { JOB_PREFETCH: '64', ...env.worker },
    edge: {
      REPLY_TIMEOUT_MS: String(FAULTS.replyTimeoutMs),
      // Below the short publish grace, as 5 s is below the default 30 s.
      HOLD_PUBLISH_MARK_DELAY_MS: String(FAULTS.holdPublishMarkDelayMs),
      // The receiver is on loopback: edge accepts the URL with the development setting too.
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      AUTH_FAILURES_PER_MINUTE: '100000',
      ...env.edge,
    },
  };
}

export interface FaultStackOptions {
  /**
   * `single` (default): one PostgreSQL server, one broker node. `ha`: PostgreSQL with a
   * synchronous standby and a three-node RabbitMQ cluster, each behind one address.
   */
  shape?: 'single' | 'ha';
  /** Processes of edge and of the worker (1 each by default). */
  edges?: number;
  workers?: number;
  /** Puts fault-injecting TCP proxies on the paths to billing and to the model node. */
  proxied?: boolean;
  /** Runs every process on a wall clock a test can move (`Service.clock`; libfaketime). */
  movableClocks?: boolean;
  /** Where under `.faults/logs` the services' logs go (`cluster` for the `ha` shape). */
  logDir?: string;
  /** A process that exits by itself is started again, as Kubernetes would (`Service.crashes`). */
  supervised?: boolean;
  /** Environment added to (or replacing) each service's. */
  env?: GatewayEnv;
}

export async function startFaultStack(options: FaultStackOptions = {}): Promise<FaultStack> {
  const infra = await startTestInfrastructure({ highAvailability: options.shape === 'ha' });
  const { brokerCluster: cluster, postgresStandby: postgres } = infra;
  const broker = cluster ?? infra.rabbitmq;
  // createTestDatabase and friends read these, as in the normal suite's workers.
  process.env[TEST_ENV.postgresAdminUrl] = infra.postgres.adminUrl;
  process.env[TEST_ENV.amqpUrl] = broker.url;
  process.env[TEST_ENV.baseDir] = infra.baseDir;
  const serviceUrls = await addTestBrokerUsers(broker, BROKER_SERVICES, (users) =>
    brokerDefinitions({ users, prefixPattern: TEST_PREFIX_PATTERN }),
  );
  process.env[TEST_ENV.amqpServiceUrls] = JSON.stringify(serviceUrls);
  const certs = createTestCertificates();
  const receiver = await startReceiver(certs);
  const node = await createStandInModelNode(FAULTS.node);
  // The billing proxy learns billing's port once the port is chosen (it is not running yet).
  const postgresPort = Number(new URL(infra.postgres.adminUrl).port);
  const paths = options.proxied
    ? {
        billing: await startTcpBalancer([]),
        ledger: await startTcpBalancer([postgresPort]),
        admission: await startTcpBalancer([postgresPort]),
        model: await startTcpBalancer([node.port]),
        // Edges to the workers' direct job API (ADR 0072), balanced over them.
        jobs: await startTcpBalancer([]),
      }
    : undefined;
  // The services' logs, for whoever reads a failure (git-ignored), written as they come.
  const logDir = path.join(LOG_DIR, options.logDir ?? (cluster ? 'cluster' : '.'));
  const { replicas, billingOwnerUrl } = await startServices(certs, {
    edges: options.edges ?? 1,
    workers: options.workers ?? 1,
    reachBilling: (port) => {
      paths?.billing.repoint([port]);
      return `http://127.0.0.1:${paths?.billing.port ?? port}`;
    },
    reachLedger: (databaseUrl) => through(paths?.ledger, databaseUrl),
    reachAdmission: (databaseUrl) => through(paths?.admission, databaseUrl),
    reachWorkers: (ports) => {
      if (!paths) return ports.map((port) => `http://127.0.0.1:${port}`);
      paths.jobs.repoint(ports);
      return [`http://127.0.0.1:${paths.jobs.port}`];
    },
    env: options.env ?? {},
    ...(options.movableClocks && { clockDir: infra.baseDir }),
    logDir,
    supervised: options.supervised === true,
  });
  const first = (name: ServiceName) => replicas.find((replica) => replica.name === name)!;
  const services = {
    billing: first('billing'),
    dispatcher: first('dispatcher'),
    worker: first('worker'),
    edge: first('edge'),
  };
  const admin = adminCaller(services.edge.port, FAULTS.adminToken);
  const operator = operatorOf(admin);
  const modelUrl = paths ? `http://127.0.0.1:${paths.model.port}` : node.url;
  await putStandInModels(admin, modelUrl, { chat: CHAT_MODEL, native: NATIVE_MODEL });
  const lanes: Lane[] = [];
  for (let index = 0; index < FAULTS.concurrency; index += 1) {
    const account = await fundAccount(operator, {
      name: `lane-${index}`,
      keyName: 'k',
      creditDzd: 10_000,
      credit: { reference: 'fault suite', idempotencyKey: `lane-${index}` },
      // The suite sends far more than the default 100 requests per minute per account.
      rateLimitPerMinute: 100_000,
    });
    lanes.push({ index, ...account });
  }
  const sql = new pg.Pool({ connectionString: billingOwnerUrl, max: 2 });
  // A restarted PostgreSQL ends idle pool connections; the pool replaces them.
  sql.on('error', () => undefined);
  return {
    infra,
    ...(cluster && { brokerCluster: cluster }),
    ...(postgres && { postgresStandby: postgres }),
    services,
    replicas,
    edges: replicas.filter((replica) => replica.name === 'edge'),
    workers: replicas.filter((replica) => replica.name === 'worker'),
    ...(paths && { paths }),
    node,
    receiver,
    lanes,
    logDir,
    sql,
    admin,
    operator,
    webhookUrl: (id) => `https://127.0.0.1:${receiver.port}/hook/${id}`,
    close: async () => {
      await Promise.allSettled(replicas.map((replica) => replica.stop()));
      await Promise.allSettled([
        paths?.billing.close(),
        paths?.ledger.close(),
        paths?.admission.close(),
        paths?.model.close(),
        paths?.jobs.close(),
      ]);
      await sql.end().catch(() => undefined);
      await node.close();
      await receiver.close();
      certs.remove();
      await infra.stop();
    },
  };
}

/** `databaseUrl` through `proxy`'s port, or as it is without one. */
function through(proxy: TcpBalancer | undefined, databaseUrl: string): string {
  if (!proxy) return databaseUrl;
  const url = new URL(databaseUrl);
  url.port = String(proxy.port);
  return url.toString();
}
