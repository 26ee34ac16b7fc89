import { describe, expect, it } from '@jest/globals';
import { brokerUserOf, startGateway, type LaunchRequest } from './gateway-stack.js';

/*
 * How the four services are wired to each other, checked without running them: a launcher that
 * records what it was asked to start hands out addresses in order.
 */

interface Fake {
  baseUrl: string;
  request: LaunchRequest;
}

function recordingLauncher() {
  const launched: Fake[] = [];
  const launch = async (request: LaunchRequest): Promise<Fake> => {
    const fake = { baseUrl: `http://127.0.0.1:${9000 + launched.length}`, request };
    launched.push(fake);
    return fake;
  };
  return { launched, launch };
}

const topology = (launch: (request: LaunchRequest) => Promise<Fake>) => ({
  launch,
  amqp: (service: Parameters<typeof brokerUserOf>[0]) => ({
    AMQP_URL: `amqp://${brokerUserOf(service)}@127.0.0.1`,
    AMQP_PREFIX: 't.',
  }),
  databaseUrls: { billing: 'postgres://billing', dispatcher: 'postgres://dispatcher' },
});

describe('startGateway', () => {
  it('starts billing, the dispatcher, the workers, then the edges, each named', async () => {
    const { launched, launch } = recordingLauncher();
    const gateway = await startGateway({ ...topology(launch), workers: 2, edges: 2 });
    expect(launched.map((fake) => fake.request.label)).toEqual([
      'billing',
      'dispatcher',
      'worker',
      'worker-2',
      'edge',
      'edge-2',
    ]);
    expect(gateway.all).toEqual(launched);
    expect(gateway.edges.map((edge) => edge.request.label)).toEqual(['edge', 'edge-2']);
  });

  it('gives each service its peers’ addresses and the secret each peer expects of it', async () => {
    const { launch } = recordingLauncher();
    const gateway = await startGateway({ ...topology(launch), secrets: { adminToken: 'admin' } });
    const { billing, dispatcher, worker, edge } = gateway.environments;
    const { secrets } = gateway;
    expect(billing).toMatchObject({
      DATABASE_URL: 'postgres://billing',
      EDGE_INTERNAL_TOKEN: secrets.edgeToken,
      WORKER_INTERNAL_TOKEN: secrets.workerToken,
      AMQP_URL: 'amqp://billing@127.0.0.1',
    });
    expect(dispatcher).toMatchObject({
      DATABASE_URL: 'postgres://dispatcher',
      INTERNAL_TOKEN: secrets.dispatcherToken,
    });
    expect(worker).toMatchObject({
      BILLING_URL: gateway.billing.baseUrl,
      BILLING_INTERNAL_TOKEN: secrets.workerToken,
      EDGE_INTERNAL_TOKEN: secrets.edgeAtWorkerToken,
      AMQP_URL: 'amqp://inference-worker@127.0.0.1',
    });
    expect(edge).toMatchObject({
      BILLING_URL: gateway.billing.baseUrl,
      BILLING_INTERNAL_TOKEN: secrets.edgeToken,
      DISPATCHER_URL: gateway.dispatcher.baseUrl,
      DISPATCHER_INTERNAL_TOKEN: secrets.dispatcherToken,
      WORKER_URLS: gateway.workers[0]!.baseUrl,
      WORKER_INTERNAL_TOKEN: secrets.edgeAtWorkerToken,
      ADMIN_TOKEN: 'admin',
    });
    // Every credential is its own: no service can pass for another.
    const tokens = [
      secrets.edgeToken,
      secrets.workerToken,
      secrets.dispatcherToken,
      secrets.edgeAtWorkerToken,
    ];
    expect(new Set(tokens).size).toBe(4);
  });

  it('sends edges and workers through `reachBilling`, and lets overrides win', async () => {
    const { launch } = recordingLauncher();
    const gateway = await startGateway(
      {
        ...topology(launch),
        reachBilling: (billing) => `${billing.baseUrl}/via-proxy`,
        common: { OTEL_SERVICE: 'x' },
      },
      { edge: { BILLING_URL: 'http://127.0.0.1:1/elsewhere' }, worker: { JOB_PREFETCH: '64' } },
    );
    const { worker, edge, billing } = gateway.environments;
    expect(worker).toMatchObject({
      BILLING_URL: `${gateway.billing.baseUrl}/via-proxy`,
      JOB_PREFETCH: '64',
      OTEL_SERVICE: 'x',
    });
    expect(edge!.BILLING_URL).toBe('http://127.0.0.1:1/elsewhere');
    expect(billing!.OTEL_SERVICE).toBe('x');
  });

  it('gives edges every worker for direct jobs, or none when the stack queues them all', async () => {
    const { launch } = recordingLauncher();
    const direct = await startGateway({ ...topology(launch), workers: 2 });
    expect(direct.environments.edge!.WORKER_URLS).toBe(
      direct.workers.map((worker) => worker.baseUrl).join(','),
    );
    const proxied = await startGateway({
      ...topology(launch),
      reachWorkers: () => ['http://127.0.0.1:1/proxy'],
    });
    expect(proxied.environments.edge!.WORKER_URLS).toBe('http://127.0.0.1:1/proxy');
    const queued = await startGateway({ ...topology(launch), directJobs: false });
    expect(queued.environments.edge).not.toHaveProperty('WORKER_URLS');
    expect(queued.environments.edge).not.toHaveProperty('WORKER_INTERNAL_TOKEN');
  });

  it("gives the worker billing's database as its ledger role only when the stack names one", async () => {
    const { launch } = recordingLauncher();
    const apiOnly = await startGateway(topology(launch));
    expect(apiOnly.environments.worker).not.toHaveProperty('LEDGER_DATABASE_URL');
    const base = topology(launch);
    const direct = await startGateway({
      ...base,
      databaseUrls: { ...base.databaseUrls, workerLedger: 'postgres://worker_ledger@db/billing' },
    });
    expect(direct.environments.worker!.LEDGER_DATABASE_URL).toBe(
      'postgres://worker_ledger@db/billing',
    );
    for (const service of ['billing', 'dispatcher', 'edge'] as const) {
      expect(direct.environments[service]).not.toHaveProperty('LEDGER_DATABASE_URL');
    }
  });

  it("gives edge billing's database as its admission role only when the stack names one", async () => {
    const { launch } = recordingLauncher();
    const apiOnly = await startGateway(topology(launch));
    expect(apiOnly.environments.edge).not.toHaveProperty('ADMISSION_DATABASE_URL');
    const base = topology(launch);
    const url = 'postgres://edge_admission@db/billing';
    const direct = await startGateway({
      ...base,
      databaseUrls: { ...base.databaseUrls, edgeAdmission: url },
    });
    expect(direct.environments.edge!.ADMISSION_DATABASE_URL).toBe(url);
    for (const service of ['billing', 'dispatcher', 'worker'] as const) {
      expect(direct.environments[service]).not.toHaveProperty('ADMISSION_DATABASE_URL');
    }
  });
});
