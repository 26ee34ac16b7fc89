import { randomBytes } from 'node:crypto';
import path from 'node:path';

/*
 * The four services as one gateway: which settings make billing, the dispatcher, the inference
 * worker and edge reach each other, with which secret. Every stack that runs them as processes
 * (the abuse and fault suites, the nemesis, the bench) starts them through `startGateway`; what
 * differs between stacks is how a process is run (captured output, a supervisor on a fixed
 * port, a CPU profile), which the stack passes in as its `launch`.
 */

export type GatewayService = 'billing' | 'dispatcher' | 'worker' | 'edge';

/** Each service's directory under `services/`. */
const SERVICE_DIR: Record<GatewayService, string> = {
  billing: 'billing',
  dispatcher: 'dispatcher',
  worker: 'inference-worker',
  edge: 'edge',
};

/** The built entry point of `service` in the checkout at `root`. */
export function gatewayServiceEntry(service: GatewayService, root = process.cwd()): string {
  return path.resolve(root, 'services', SERVICE_DIR[service], 'dist', 'main.js');
}

/** The broker user a service connects as (`testServiceAmqpUrl`, broker definitions). */
export function brokerUserOf(service: GatewayService): string {
  return SERVICE_DIR[service];
}

export interface GatewaySecrets {
  /** Edge's and the worker's credentials at billing; edge's at the dispatcher and the workers. */
  edgeToken: string;
  workerToken: string;
  dispatcherToken: string;
  edgeAtWorkerToken: string;
  /** The operator API's bearer token. */
  adminToken: string;
  /** Billing's and the dispatcher's keys for secrets at rest, base64 of 32 bytes. */
  masterKeyBase64: string;
  encryptionKeyBase64: string;
}

export function gatewaySecrets(given: Partial<GatewaySecrets> = {}): GatewaySecrets {
  const token = () => randomBytes(32).toString('hex');
  const key = () => randomBytes(32).toString('base64');
  return {
    edgeToken: token(),
    workerToken: token(),
    dispatcherToken: token(),
    edgeAtWorkerToken: token(),
    adminToken: token(),
    masterKeyBase64: key(),
    encryptionKeyBase64: key(),
    ...given,
  };
}

export type GatewayEnv = Partial<Record<GatewayService, NodeJS.ProcessEnv>>;

export interface DatabaseUrls {
  billing: string;
  dispatcher: string;
  /**
   * Billing's database as the worker's ledger role (ADR 0070): the worker then ends holds there
   * itself. Unset: it ends them over billing's API.
   */
  workerLedger?: string;
  /**
   * Billing's database as edge's admission role (ADR 0070): edge then admits API keys there
   * itself. Unset: every admission goes over billing's API.
   */
  edgeAdmission?: string;
}

export interface GatewayWiring {
  secrets: GatewaySecrets;
  /** `AMQP_URL` and `AMQP_PREFIX` of one service (each its own broker user, as deployed). */
  amqp(service: GatewayService): NodeJS.ProcessEnv;
  /** The databases' URLs as their runtime roles. */
  databaseUrls: DatabaseUrls;
  /** Where edges and workers reach billing, and edges the dispatcher. */
  billingUrl: string;
  dispatcherUrl: string;
  /** Where edges hand synchronous jobs to the workers directly (ADR 0072); empty: the queue. */
  workerUrls: string[];
  /** Given to every service (e.g. `OTEL_*`). */
  common?: NodeJS.ProcessEnv;
}

/** One service's environment: the wiring first, then `overrides` (which win). */
export function gatewayEnvironment(
  service: GatewayService,
  wiring: GatewayWiring,
  overrides: GatewayEnv = {},
): NodeJS.ProcessEnv {
  const { secrets } = wiring;
  const own: Record<GatewayService, () => NodeJS.ProcessEnv> = {
    billing: () => ({
      DATABASE_URL: wiring.databaseUrls.billing,
      EDGE_INTERNAL_TOKEN: secrets.edgeToken,
      WORKER_INTERNAL_TOKEN: secrets.workerToken,
      MASTER_KEY: secrets.masterKeyBase64,
    }),
    dispatcher: () => ({
      DATABASE_URL: wiring.databaseUrls.dispatcher,
      INTERNAL_TOKEN: secrets.dispatcherToken,
      ENCRYPTION_KEY: secrets.encryptionKeyBase64,
    }),
    worker: () => ({
      BILLING_URL: wiring.billingUrl,
      BILLING_INTERNAL_TOKEN: secrets.workerToken,
      EDGE_INTERNAL_TOKEN: secrets.edgeAtWorkerToken,
      ...(wiring.databaseUrls.workerLedger
        ? { LEDGER_DATABASE_URL: wiring.databaseUrls.workerLedger }
        : {}),
    }),
    edge: () => ({
      BILLING_URL: wiring.billingUrl,
      BILLING_INTERNAL_TOKEN: secrets.edgeToken,
      ADMIN_TOKEN: secrets.adminToken,
      DISPATCHER_URL: wiring.dispatcherUrl,
      DISPATCHER_INTERNAL_TOKEN: secrets.dispatcherToken,
      ...(wiring.workerUrls.length > 0
        ? {
            WORKER_URLS: wiring.workerUrls.join(','),
            WORKER_INTERNAL_TOKEN: secrets.edgeAtWorkerToken,
          }
        : {}),
      ...(wiring.databaseUrls.edgeAdmission
        ? { ADMISSION_DATABASE_URL: wiring.databaseUrls.edgeAdmission }
        : {}),
    }),
  };
  return { ...wiring.common, ...wiring.amqp(service), ...own[service](), ...overrides[service] };
}

/** What a stack's `launch` is asked to run: `label` names a replica (`edge-2`). */
export interface LaunchRequest {
  service: GatewayService;
  label: string;
  env: NodeJS.ProcessEnv;
}

/** A running process as the stack's launcher returns it; ready when `launch` resolved. */
export interface Launched {
  readonly baseUrl: string;
}

export interface GatewayTopology<P extends Launched> {
  /** Runs one process and resolves once it answers ready. */
  launch(request: LaunchRequest): Promise<P>;
  amqp(service: GatewayService): NodeJS.ProcessEnv;
  databaseUrls: DatabaseUrls;
  /** Processes of the worker and of edge (1 each by default). */
  workers?: number;
  edges?: number;
  /**
   * Edges hand synchronous jobs to the workers over HTTP (ADR 0072), as shipped stacks do;
   * false: every job through the queue.
   */
  directJobs?: boolean;
  /** Where edges reach the started workers for direct jobs: each itself by default, or proxies. */
  reachWorkers?(workers: P[]): string[];
  /** Where edges and workers reach the started billing: itself by default, or a proxy. */
  reachBilling?(billing: P): string;
  secrets?: Partial<GatewaySecrets>;
  common?: NodeJS.ProcessEnv;
}

export interface Gateway<P extends Launched> {
  billing: P;
  dispatcher: P;
  workers: P[];
  edges: P[];
  /** Every process in the order it was started (billing first, edges last). */
  all: P[];
  secrets: GatewaySecrets;
  /** The environment each service was started with (a stack derives more processes from it). */
  environments: Record<GatewayService, NodeJS.ProcessEnv>;
}

/**
 * Starts billing, the dispatcher, the workers and the edges, in that order, each once the one
 * it needs is ready; `overrides` are added to (or replace) a service's environment.
 */
export async function startGateway<P extends Launched>(
  topology: GatewayTopology<P>,
  overrides: GatewayEnv = {},
): Promise<Gateway<P>> {
  const secrets = gatewaySecrets(topology.secrets);
  const wiring: GatewayWiring = {
    secrets,
    amqp: topology.amqp,
    databaseUrls: topology.databaseUrls,
    billingUrl: '',
    dispatcherUrl: '',
    workerUrls: [],
    ...(topology.common && { common: topology.common }),
  };
  const environments = {} as Record<GatewayService, NodeJS.ProcessEnv>;
  const all: P[] = [];
  const start = async (service: GatewayService, index: number): Promise<P> => {
    const env = gatewayEnvironment(service, wiring, overrides);
    environments[service] ??= env;
    const label = index === 1 ? service : `${service}-${index}`;
    const started = await topology.launch({ service, label, env });
    all.push(started);
    return started;
  };
  const billing = await start('billing', 1);
  wiring.billingUrl = topology.reachBilling?.(billing) ?? billing.baseUrl;
  const dispatcher = await start('dispatcher', 1);
  wiring.dispatcherUrl = dispatcher.baseUrl;
  const workers: P[] = [];
  for (let index = 1; index <= (topology.workers ?? 1); index += 1) {
    workers.push(await start('worker', index));
  }
  if (topology.directJobs !== false) {
    wiring.workerUrls = topology.reachWorkers?.(workers) ?? workers.map((worker) => worker.baseUrl);
  }
  const edges: P[] = [];
  for (let index = 1; index <= (topology.edges ?? 1); index += 1) {
    edges.push(await start('edge', index));
  }
  return { billing, dispatcher, workers, edges, all, secrets, environments };
}
