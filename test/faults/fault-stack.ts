import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { BROKER_SERVICES, brokerDefinitions } from '@gateway/messaging';
import { createStandInModelNode, type StandInModelNode } from '@gateway/stand-ins';
import {
  TEST_ENV,
  TEST_PREFIX_PATTERN,
  addTestBrokerUsers,
  createTestCertificates,
  createTestDatabase,
  freeLoopbackPort,
  spawnService,
  startTestInfrastructure,
  testServiceAmqpUrl,
  uniquePrefix,
  waitForStatus,
  type PostgresWithStandby,
  type RabbitMqCluster,
  type ServiceProcess,
  type TestCertificates,
  type TestInfrastructure,
} from '@gateway/testing';
import { billingDatabaseTemplate } from '../../services/billing/src/db/client.js';
import { dispatcherDatabaseTemplate } from '../../services/dispatcher/src/db/migrate.js';
import {
  startReceiver,
  type Receiver,
} from '../../services/dispatcher/src/testing/receiver.suite.js';
import {
  adminCaller,
  openAccount,
  putStandInModels,
  STAND_IN_PRICES,
  type AdminCall,
} from '../abuse/abuse-stack.js';
import { FAULTS } from './fault-settings.js';

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

export type ServiceName = 'billing' | 'dispatcher' | 'worker' | 'edge';

const ENTRY: Record<ServiceName, string> = {
  billing: 'billing',
  dispatcher: 'dispatcher',
  worker: 'inference-worker',
  edge: 'edge',
};

/** One service as a process that a scenario may kill, pause and start again on its port. */
export class Service {
  private process: ServiceProcess | undefined;
  private paused = false;
  /** Output of the processes this service ran before the current one (kept across kills). */
  private readonly earlier: string[] = [];

  constructor(
    readonly name: ServiceName,
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.process !== undefined) this.earlier.push(this.process.output());
    const entry = path.resolve('services', ENTRY[this.name], 'dist', 'main.js');
    this.process = await spawnService({ entry, env: { ...this.env, PORT: String(this.port) } });
    await waitForStatus(`${this.baseUrl}/readyz`, 200, 60_000);
  }

  get pid(): number {
    const pid = this.process?.child.pid;
    if (pid === undefined) throw new Error(`${this.name} is not running`);
    return pid;
  }

  /** kill -9: no shutdown, no flush; the process is gone when this resolves. */
  async kill(): Promise<void> {
    this.resume();
    if (this.running()) await this.process?.stop('SIGKILL');
  }

  pause(): void {
    this.process?.child.kill('SIGSTOP');
    this.paused = true;
  }

  resume(): void {
    if (this.paused) this.process?.child.kill('SIGCONT');
    this.paused = false;
  }

  running(): boolean {
    const child = this.process?.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /** Everything every process of this service wrote (JSON log lines). */
  output(): string {
    return [...this.earlier, this.process?.output() ?? ''].join('');
  }

  async stop(): Promise<void> {
    this.resume();
    if (this.running()) await this.process?.stop('SIGTERM');
  }
}

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
  services: Record<ServiceName, Service>;
  node: StandInModelNode;
  receiver: Receiver;
  lanes: Lane[];
  /** The billing database as its owner: the suite reads holds directly. */
  sql: pg.Pool;
  admin: AdminCall;
  webhookUrl(id: string): string;
  close(): Promise<void>;
}

const secret = () => randomBytes(32).toString('hex');

async function servicesFor(
  infra: TestInfrastructure,
  certs: TestCertificates,
): Promise<{ services: Record<ServiceName, Service>; billingOwnerUrl: string }> {
  const billingDb = await createTestDatabase(billingDatabaseTemplate);
  const dispatcherDb = await createTestDatabase(dispatcherDatabaseTemplate);
  const [billingPort, dispatcherPort, workerPort, edgePort] = await Promise.all(
    [0, 1, 2, 3].map(() => freeLoopbackPort()),
  );
  const tokens = { edge: secret(), worker: secret(), dispatcher: secret() };
  // Each service as its own broker user (created on this node by startFaultStack).
  const prefix = uniquePrefix('faults');
  const amqp = (service: string) => ({
    AMQP_URL: testServiceAmqpUrl(service),
    AMQP_PREFIX: prefix,
  });
  const billingUrl = `http://127.0.0.1:${billingPort}`;
  const services = {
    billing: new Service('billing', billingPort!, {
      ...amqp('billing'),
      DATABASE_URL: billingDb.runtimeUrl,
      EDGE_INTERNAL_TOKEN: tokens.edge,
      WORKER_INTERNAL_TOKEN: tokens.worker,
      MASTER_KEY: randomBytes(32).toString('base64'),
      // Orphaned holds (edge died before publishing) are released within seconds, not 30 s.
      HOLD_PUBLISH_GRACE_MS: String(FAULTS.holdPublishGraceMs),
      HOLD_SWEEP_INTERVAL_MS: String(FAULTS.holdSweepIntervalMs),
    }),
    dispatcher: new Service('dispatcher', dispatcherPort!, {
      ...amqp('dispatcher'),
      DATABASE_URL: dispatcherDb.runtimeUrl,
      INTERNAL_TOKEN: tokens.dispatcher,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      DISPATCH_INTERVAL_MS: '200',
      RETRY_SCHEDULE_A_MS: '0,500,1000,2000,4000',
      ATTEMPT_TIMEOUT_MS: '3000',
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      WEBHOOK_CA_FILE: certs.caFile,
    }),
    worker: new Service('worker', workerPort!, {
      ...amqp('inference-worker'),
      BILLING_URL: billingUrl,
      BILLING_INTERNAL_TOKEN: tokens.worker,
      JOB_PREFETCH: '64',
    }),
    edge: new Service('edge', edgePort!, {
      ...amqp('edge'),
      BILLING_URL: billingUrl,
      BILLING_INTERNAL_TOKEN: tokens.edge,
      ADMIN_TOKEN: FAULTS.adminToken,
      DISPATCHER_URL: `http://127.0.0.1:${dispatcherPort}`,
      DISPATCHER_INTERNAL_TOKEN: tokens.dispatcher,
      REPLY_TIMEOUT_MS: String(FAULTS.replyTimeoutMs),
      // Below the short publish grace, as 5 s is below the default 30 s.
      HOLD_PUBLISH_MARK_DELAY_MS: String(FAULTS.holdPublishMarkDelayMs),
      // The receiver is on loopback: edge accepts the URL with the development setting too.
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      AUTH_FAILURES_PER_MINUTE: '100000',
    }),
  };
  return { services, billingOwnerUrl: billingDb.url };
}

export interface FaultStackOptions {
  /**
   * `single` (default): one PostgreSQL server, one broker node. `ha`: PostgreSQL with a
   * synchronous standby and a three-node RabbitMQ cluster, each behind one address.
   */
  shape?: 'single' | 'ha';
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
  const { services, billingOwnerUrl } = await servicesFor(infra, certs);
  for (const name of ['billing', 'dispatcher', 'worker', 'edge'] as const) {
    await services[name].start();
  }
  const admin = adminCaller(services.edge.port, FAULTS.adminToken);
  await putStandInModels(admin, node.url, { chat: CHAT_MODEL, native: NATIVE_MODEL });
  const lanes: Lane[] = [];
  for (let index = 0; index < FAULTS.concurrency; index += 1) {
    const account = await openAccount(admin, {
      name: `lane-${index}`,
      keyName: 'k',
      creditDzd: 10_000,
      reference: 'fault suite',
      creditKey: `lane-${index}`,
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
    node,
    receiver,
    lanes,
    sql,
    admin,
    webhookUrl: (id) => `https://127.0.0.1:${receiver.port}/hook/${id}`,
    close: async () => {
      await Promise.allSettled(Object.values(services).map((service) => service.stop()));
      // The services' logs, for whoever reads a failure (git-ignored).
      const logDir = cluster ? path.join(LOG_DIR, 'cluster') : LOG_DIR;
      mkdirSync(logDir, { recursive: true });
      for (const service of Object.values(services)) {
        writeFileSync(path.join(logDir, `${service.name}.log`), service.output());
      }
      await sql.end().catch(() => undefined);
      await node.close();
      await receiver.close();
      certs.remove();
      await infra.stop();
    },
  };
}
