import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  brokerPermissions,
  rabbitPasswordHash,
  type BrokerDefinitions,
  type BrokerService,
} from '@gateway/messaging';
import { loadCompose } from './support/compose.js';
import { containerEnvironment, isReleaseJob, secretValues, workloads } from './support/k8s-env.js';
import { buildKustomization } from './support/kustomize.js';
import { GATEWAY_SERVICES } from './support/schemas.js';

/*
 * The services' broker users, as compose's `rabbitmq-users` one-shot and the Kubernetes Job
 * `gateway-broker-users` create them: the command (packages/messaging, built) runs with the
 * environment they give it, against a stand-in for RabbitMQ's management API on loopback. Each
 * service's user must be the one of its own AMQP_URL, with that password and exactly the
 * permissions of broker-access.ts. (The test broker's users get the same permissions from
 * Jest's global setup; packages/messaging/src/broker-access.integration.test.ts checks them on RabbitMQ.)
 */

const CLI_IN_IMAGE = 'node_modules/@gateway/messaging/dist/broker-users-cli.js';
const CLI = path.resolve('packages/messaging/dist/broker-users-cli.js');
const URL_VARIABLES: Record<BrokerService, string> = {
  edge: 'EDGE_AMQP_URL',
  'inference-worker': 'INFERENCE_WORKER_AMQP_URL',
  billing: 'BILLING_AMQP_URL',
  dispatcher: 'DISPATCHER_AMQP_URL',
};

interface Received {
  method: string;
  url: string;
  authorization: string;
  body: BrokerDefinitions;
}

let server: Server;
let port: number;
const received: Received[] = [];
/** Statuses the stand-in answers, in order; 204 once they run out. */
let statuses: number[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        method: req.method!,
        url: req.url!,
        authorization: req.headers.authorization ?? '',
        body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') as BrokerDefinitions,
      });
      res.statusCode = statuses.shift() ?? 204;
      res.end(res.statusCode >= 400 ? '{"error":"refused"}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** Runs the command with exactly `env`; its exit code and output. */
function runCli(env: Record<string, string>, args: string[] = []) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The management URL moved to the stand-in (credentials kept). */
function onStandIn(env: Record<string, string>): Record<string, string> {
  const management = new URL(env.RABBITMQ_MANAGEMENT_URL!);
  management.protocol = 'http:';
  management.host = `127.0.0.1:${port}`;
  return { ...env, RABBITMQ_MANAGEMENT_URL: management.href };
}

/** Each service's user is its URL's, with its password and exactly its permissions. */
function expectUsersOf(
  definitions: BrokerDefinitions,
  urls: Record<BrokerService, string>,
  vhost: string,
) {
  const access = brokerPermissions();
  expect(definitions.users).toHaveLength(4);
  for (const service of GATEWAY_SERVICES) {
    const url = new URL(urls[service]);
    const name = decodeURIComponent(url.username);
    const user = definitions.users.find((u) => u.name === name)!;
    const salt = Buffer.from(user.password_hash, 'base64').subarray(0, 4);
    expect(user.password_hash).toBe(rabbitPasswordHash(decodeURIComponent(url.password), salt));
    expect(user.tags).toEqual([]);
    expect(definitions.permissions.find((p) => p.user === name)).toEqual({
      user: name,
      vhost,
      ...access[service].permission,
    });
    expect(definitions.topic_permissions.find((p) => p.user === name)).toEqual({
      user: name,
      vhost,
      ...access[service].topic,
    });
  }
}

describe("compose's rabbitmq-users", () => {
  const compose = loadCompose();
  const oneShot = compose.services['rabbitmq-users']!;
  const serviceUrls = (file = compose) =>
    Object.fromEntries(
      GATEWAY_SERVICES.map((s) => [s, file.services[s]!.environment.AMQP_URL!]),
    ) as Record<BrokerService, string>;

  it('runs the command in the image on the services’ own URLs (one value each)', () => {
    expect(oneShot.entrypoint).toEqual(['node', CLI_IN_IMAGE]);
    for (const service of GATEWAY_SERVICES) {
      expect(oneShot.environment[URL_VARIABLES[service]]).toBe(serviceUrls()[service]);
    }
    // No two services share a broker user; none connects as the administrator.
    const users = GATEWAY_SERVICES.map((s) => new URL(serviceUrls()[s]).username);
    expect(new Set(users).size).toBe(4);
    const admin = new URL(oneShot.environment.RABBITMQ_MANAGEMENT_URL!).username;
    expect(users).not.toContain(admin);
    expect(compose.services.rabbitmq!.environment.RABBITMQ_DEFAULT_USER).toBe(admin);
  });

  it('creates every service user with its password and permissions, as the administrator', async () => {
    received.length = 0;
    const { code, stdout } = await runCli(onStandIn(oneShot.environment));
    expect(code).toBe(0);
    expect(received).toHaveLength(1);
    const [request] = received;
    expect([request!.method, request!.url]).toEqual(['POST', '/api/definitions']);
    const admin = new URL(oneShot.environment.RABBITMQ_MANAGEMENT_URL!);
    const basic = Buffer.from(`${admin.username}:${admin.password}`).toString('base64');
    expect(request!.authorization).toBe(`Basic ${basic}`);
    expectUsersOf(request!.body, serviceUrls(), '/');
    // Its log names the users, never a password.
    expect(JSON.parse(stdout.trim())).toMatchObject({ msg: 'broker users provisioned' });
    for (const service of GATEWAY_SERVICES) {
      expect(stdout).not.toContain(new URL(serviceUrls()[service]).password);
    }
  });

  it('follows passwords overridden from the environment, services and users alike', async () => {
    const overridden = loadCompose(undefined, {
      RABBITMQ_EDGE_PASSWORD: 'edge-'.repeat(8),
      RABBITMQ_DISPATCHER_PASSWORD: 'dispatcher-'.repeat(4),
    });
    expect(new URL(serviceUrls(overridden).edge).password).toBe('edge-'.repeat(8));
    received.length = 0;
    const env = overridden.services['rabbitmq-users']!.environment;
    expect((await runCli(onStandIn(env))).code).toBe(0);
    expectUsersOf(received[0]!.body, serviceUrls(overridden), '/');
  });

  it('retries while the broker starts, and fails (1) on a refusal without retrying', async () => {
    received.length = 0;
    statuses = [503];
    expect((await runCli(onStandIn(oneShot.environment))).code).toBe(0);
    expect(received).toHaveLength(2);
    received.length = 0;
    statuses = [401];
    const refused = await runCli(onStandIn(oneShot.environment));
    expect(refused.code).toBe(1);
    expect(received).toHaveLength(1);
    expect(JSON.parse(refused.stdout.trim())).toMatchObject({ level: 'fatal' });
    expect(refused.stdout).toContain('HTTP 401');
  });

  it('refuses an environment that would share or misplace a credential', async () => {
    const env = onStandIn(oneShot.environment);
    const cases: [Record<string, string>, RegExp][] = [
      [{ ...env, BILLING_AMQP_URL: '' }, /BILLING_AMQP_URL is required/],
      [{ ...env, BILLING_AMQP_URL: env.EDGE_AMQP_URL! }, /a broker user of its own/],
      [
        { ...env, EDGE_AMQP_URL: env.EDGE_AMQP_URL!.replace('gateway-edge', 'gateway') },
        /management user cannot be a service's user/,
      ],
      [{ ...env, EDGE_AMQP_URL: `${env.EDGE_AMQP_URL}/other` }, /share one vhost/],
      [{ ...env, RABBITMQ_MANAGEMENT_URL: 'http://rabbitmq:15672' }, /a user and a password/],
    ];
    received.length = 0;
    for (const [bad, message] of cases) {
      const { code, stdout } = await runCli(bad);
      expect([code, stdout]).toEqual([1, expect.stringMatching(message)]);
    }
    expect(received).toHaveLength(0);
  });
});

describe.each(['base', 'dev', 'prod'])('k8s %s: the Job gateway-broker-users', (layer) => {
  const manifests = buildKustomization(layer === 'base' ? 'k8s/base' : `k8s/overlays/${layer}`);
  const external = secretValues(buildKustomization('k8s/base'));
  const all = workloads(manifests);
  const job = all.find((w) => isReleaseJob(w.manifest, 'gateway-broker-users'))!;
  const container = job.podSpec.containers[0]!;
  const refOf = (c: typeof container, variable: string) =>
    c.env?.find((e) => e.name === variable)?.valueFrom?.secretKeyRef;
  const deployment = (service: string) =>
    all.find((w) => w.manifest.kind === 'Deployment' && w.manifest.metadata.name === service)!
      .podSpec.containers[0]!;

  it("takes each service's user from the Secret key the service's AMQP_URL comes from", () => {
    expect(job.manifest.kind).toBe('Job');
    expect(container.command).toEqual(['node', CLI_IN_IMAGE]);
    const keys = GATEWAY_SERVICES.map((service) => {
      const ref = refOf(deployment(service), 'AMQP_URL');
      expect([service, refOf(container, URL_VARIABLES[service])]).toEqual([service, ref]);
      return ref!.key;
    });
    expect(new Set(keys).size).toBe(4);
    // The administrator's URL is the Job's alone.
    const management = refOf(container, 'RABBITMQ_MANAGEMENT_URL')!;
    for (const service of GATEWAY_SERVICES) {
      const refs = (deployment(service).env ?? []).map((e) => e.valueFrom?.secretKeyRef?.key);
      expect(refs).not.toContain(management.key);
    }
  });

  it('produces the users of those URLs (printed definitions)', async () => {
    const env = containerEnvironment(container, manifests, external);
    const { code, stdout } = await runCli(env, ['--print']);
    expect(code).toBe(0);
    const urls = Object.fromEntries(
      GATEWAY_SERVICES.map((s) => [s, env[URL_VARIABLES[s]]!]),
    ) as Record<BrokerService, string>;
    // No layer ships its Secret but the base: its example URLs (vhost /) are what they resolve to.
    const vhost = '/';
    expectUsersOf(JSON.parse(stdout) as BrokerDefinitions, urls, vhost);
  });
});
