import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '@gateway/config';
import { loadCompose } from './support/compose.js';
import {
  DEPLOYMENTS,
  EDGE_DEPLOYMENTS,
  containerEnvironment,
  imageService,
  isReleaseJob,
  secretValues,
  workloads,
} from './support/k8s-env.js';
import { buildKustomization, type Manifest } from './support/kustomize.js';
import {
  CONFIG_SCHEMAS,
  EDGE_SURFACES,
  EDGE_SURFACE_SETTINGS,
  GATEWAY_SERVICES,
  MIGRATED_SERVICES,
  MIGRATION_SCHEMAS,
  edgeSurfaces,
  isGatewayService,
  knownKeys,
  migrationKeys,
  missingSurfaceSettings,
  requiredKeys,
  type GatewayService,
} from './support/schemas.js';

/*
 * Every environment variable docker-compose.yml and the Kubernetes overlays set for a service
 * exists in that service's configuration schema (read from its source now), every required one
 * is set, and the values pass the service's own validation (`loadConfig`, what `--check-config`
 * runs). Edge's processes also set what their surfaces (EDGE_SURFACES) need, which edge checks
 * at start. The migration one-shots set only variables of their service. Stand-ins, the seed and
 * third-party images are not gateway services and are not checked here.
 */

function expectMatchesSchema(service: GatewayService, env: Record<string, string>, where: string) {
  const unknown = Object.keys(env).filter((key) => !knownKeys(service).includes(key));
  const missing = [
    ...requiredKeys(service).filter((key) => !(key in env)),
    ...(service === 'edge' ? missingSurfaceSettings(env) : []),
  ];
  expect({ where, unknown, missing }).toEqual({ where, unknown: [], missing: [] });
  expect(() => loadConfig(service, CONFIG_SCHEMAS[service], env)).not.toThrow();
}

describe("edge's surfaces", () => {
  it('are the ones the schema names, each with the settings it needs', () => {
    expect([...EDGE_SURFACES].sort()).toEqual(['admin', 'api', 'dashboard']);
    expect(Object.keys(EDGE_SURFACE_SETTINGS).sort()).toEqual([...EDGE_SURFACES].sort());
  });

  it('default to all three, and a process must have the settings of each it serves', () => {
    expect(edgeSurfaces({}).sort()).toEqual([...EDGE_SURFACES].sort());
    expect(missingSurfaceSettings({})).toEqual(['AMQP_URL', 'ADMIN_TOKEN']);
    expect(
      missingSurfaceSettings({ EDGE_SURFACES: 'api,admin', ADMIN_TOKEN: 'x'.repeat(32) }),
    ).toEqual(['AMQP_URL']);
    expect(missingSurfaceSettings({ EDGE_SURFACES: 'admin', AMQP_URL: '' })).toEqual([
      'ADMIN_TOKEN',
    ]);
    expect(missingSurfaceSettings({ EDGE_SURFACES: 'dashboard' })).toEqual([]);
  });
});

const urlOf = (value: string) => new URL(value);

/**
 * A service's migration connects to its database as another user (the owner) and grants the
 * user the service connects as (the runtime role, which owns nothing).
 */
function expectOwnerMigratesForRuntimeRole(
  service: GatewayService,
  migrate: Record<string, string>,
  serviceEnv: Record<string, string>,
) {
  const schema = MIGRATION_SCHEMAS[service]!;
  expect(() => loadConfig(`${service}-migrate`, schema, migrate)).not.toThrow();
  const [owner, runtime] = [urlOf(migrate.DATABASE_URL!), urlOf(serviceEnv.DATABASE_URL!)];
  expect([owner.host, owner.pathname]).toEqual([runtime.host, runtime.pathname]);
  expect(owner.username).not.toBe(runtime.username);
  expect(migrate.RUNTIME_DATABASE_ROLE).toBe(runtime.username);
}

/**
 * The worker and edge reach billing's database each as its own role (ADR 0070): the one
 * billing's migration grants, neither billing's runtime role nor the owner.
 */
const FUNCTION_ROLES = [
  ['inference-worker', 'LEDGER_DATABASE_URL', 'WORKER_DATABASE_ROLE'],
  ['edge', 'ADMISSION_DATABASE_URL', 'EDGE_DATABASE_ROLE'],
] as const;

function expectFunctionRole(
  [, urlVariable, roleVariable]: (typeof FUNCTION_ROLES)[number],
  service: Record<string, string>,
  billing: Record<string, string>,
  migrate: Record<string, string>,
) {
  const [own, runtime] = [urlOf(service[urlVariable]!), urlOf(billing.DATABASE_URL!)];
  expect([own.host, own.pathname]).toEqual([runtime.host, runtime.pathname]);
  expect(own.username).toBe(migrate[roleVariable]);
  expect(own.username).not.toBe(runtime.username);
  expect(own.username).not.toBe(urlOf(migrate.DATABASE_URL!).username);
}

describe('docker-compose.yml', () => {
  const compose = loadCompose();
  const env = (service: string) => compose.services[service]!.environment;

  it.each(GATEWAY_SERVICES)(
    'sets exactly variables of the %s schema, every required one',
    (name) => {
      expect(compose.services[name]).toBeDefined();
      expectMatchesSchema(name, env(name), `compose ${name}`);
    },
  );

  it.each(MIGRATED_SERVICES)(
    "gives %s's migration one-shot (%s) only its variables, as the owner",
    (service, oneShot) => {
      const unknown = Object.keys(env(oneShot)).filter((k) => !migrationKeys(service).includes(k));
      expect(unknown).toEqual([]);
      expectOwnerMigratesForRuntimeRole(service, env(oneShot), env(service));
    },
  );

  it.each(FUNCTION_ROLES)(
    "gives %s billing's database as the role the migration grants",
    (...r) => {
      expectFunctionRole(r, env(r[0]), env('billing'), env('migrate'));
    },
  );

  it('wires the shared credentials and addresses consistently', () => {
    expect(env('edge').BILLING_INTERNAL_TOKEN).toBe(env('billing').EDGE_INTERNAL_TOKEN);
    expect(env('inference-worker').BILLING_INTERNAL_TOKEN).toBe(
      env('billing').WORKER_INTERNAL_TOKEN,
    );
    // Least privilege: the worker's credential is not edge's.
    expect(env('billing').WORKER_INTERNAL_TOKEN).not.toBe(env('billing').EDGE_INTERNAL_TOKEN);
    expect(env('edge').DISPATCHER_INTERNAL_TOKEN).toBe(env('dispatcher').INTERNAL_TOKEN);
    for (const client of ['edge', 'inference-worker']) {
      const billing = urlOf(env(client).BILLING_URL!);
      expect([billing.hostname, billing.port]).toEqual(['billing', env('billing').PORT]);
    }
    const dispatcher = urlOf(env('edge').DISPATCHER_URL!);
    expect([dispatcher.hostname, dispatcher.port]).toEqual(['dispatcher', env('dispatcher').PORT]);
    for (const name of GATEWAY_SERVICES) expect(env(name).HOST).toBe('0.0.0.0');
  });

  it('keeps working when the example secrets are overridden from the environment', () => {
    const overridden = loadCompose(undefined, {
      GATEWAY_BILLING_EDGE_TOKEN: 'x'.repeat(40),
      GATEWAY_BILLING_WORKER_TOKEN: 'w'.repeat(40),
      GATEWAY_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
    });
    const { billing, edge } = overridden.services;
    expect(billing!.environment.EDGE_INTERNAL_TOKEN).toBe('x'.repeat(40));
    expect(edge!.environment.BILLING_INTERNAL_TOKEN).toBe('x'.repeat(40));
    expect(billing!.environment.WORKER_INTERNAL_TOKEN).toBe('w'.repeat(40));
    expect(overridden.services['inference-worker']!.environment.BILLING_INTERNAL_TOKEN).toBe(
      'w'.repeat(40),
    );
    expectMatchesSchema('billing', overridden.services.billing!.environment, 'overridden');
  });
});

describe.each(['base', 'dev', 'prod'])('k8s %s', (layer) => {
  const manifests: Manifest[] = buildKustomization(
    layer === 'base' ? 'k8s/base' : `k8s/overlays/${layer}`,
  );
  const external = secretValues(buildKustomization('k8s/base'));
  const containers = workloads(manifests).flatMap(({ manifest, podSpec }) =>
    podSpec.containers.map((container) => ({ manifest, container })),
  );

  const deploymentEnv = (name: string) => {
    const deployment = containers.find(
      (c) => c.manifest.kind === 'Deployment' && c.manifest.metadata.name === name,
    );
    expect(deployment).toBeDefined();
    return containerEnvironment(deployment!.container, manifests, external);
  };

  it.each(Object.entries(DEPLOYMENTS))(
    "sets exactly variables of the %s Deployment's schema (%s), every required one",
    (name, service) => {
      const env = deploymentEnv(name);
      const deployment = containers.find(
        (c) => c.manifest.kind === 'Deployment' && c.manifest.metadata.name === name,
      );
      expect(imageService(deployment!.container.image)).toBe(service);
      expectMatchesSchema(service, env, `${layer} ${name}`);
    },
  );

  it("serves each of edge's surfaces from one Deployment: the dashboard apart from the APIs", () => {
    const served = Object.fromEntries(
      EDGE_DEPLOYMENTS.map((name) => [name, edgeSurfaces(deploymentEnv(name)).sort()]),
    );
    expect(served).toEqual({ edge: ['admin', 'api'], 'edge-dashboard': ['dashboard'] });
    expect(Object.values(served).flat().sort()).toEqual([...EDGE_SURFACES].sort());
  });

  it('gives the dashboard only the credentials it calls with: no broker user, no admin token', () => {
    const env = deploymentEnv('edge-dashboard');
    expect(Object.keys(env)).not.toContain('AMQP_URL');
    expect(Object.keys(env)).not.toContain('ADMIN_TOKEN');
    const { container } = containers.find((c) => c.manifest.metadata.name === 'edge-dashboard')!;
    expect((container.envFrom ?? []).filter((source) => source.secretRef)).toEqual([]);
    const secretKeys = (name: string) =>
      containers
        .find((c) => c.manifest.metadata.name === name)!
        .container.env!.flatMap((e) => e.valueFrom?.secretKeyRef?.key ?? [])
        .sort();
    expect(secretKeys('edge-dashboard')).toEqual([
      'billing-edge-token',
      'dispatcher-internal-token',
    ]);
    // edge keeps the broker user, the admin token, its admission role's database URL and its
    // credential at the workers (direct jobs, ADR 0072).
    expect(secretKeys('edge')).toEqual(
      [
        'admin-token',
        'billing-edge-token',
        'dispatcher-internal-token',
        'edge-admission-database-url',
        'edge-amqp-url',
        'worker-edge-token',
      ].sort(),
    );
  });

  it('gives the migration containers only variables of their service', () => {
    // (The broker-users Job is checked in broker-users.integration.test.ts.)
    const jobs = containers.filter((c) => isReleaseJob(c.manifest, 'gateway-migrate'));
    expect(jobs.length).toBe(2);
    for (const { container } of jobs) {
      const service = imageService(container.image);
      expect(isGatewayService(service)).toBe(true);
      const env = containerEnvironment(container, manifests, external);
      const unknown = Object.keys(env).filter(
        (k) => !migrationKeys(service as GatewayService).includes(k),
      );
      expect({ container: container.name, unknown }).toEqual({
        container: container.name,
        unknown: [],
      });
      expect(env.DATABASE_URL).toMatch(/^postgres(ql)?:\/\//);
    }
  });

  const envOf = (kind: string, name: string) => {
    const found = containers.find((c) => c.manifest.kind === kind && c.container.name === name);
    expect(found).toBeDefined();
    return containerEnvironment(found!.container, manifests, external);
  };

  it.each(MIGRATED_SERVICES.map(([service]) => service))(
    'migrates %s as the owner and runs it as the runtime role it grants',
    (service) => {
      expectOwnerMigratesForRuntimeRole(
        service,
        envOf('Job', `${service}-migrate`),
        envOf('Deployment', service),
      );
    },
  );

  it.each(FUNCTION_ROLES)(
    "gives %s billing's database as the role billing's migration grants",
    (...r) => {
      expectFunctionRole(
        r,
        envOf('Deployment', r[0]),
        envOf('Deployment', 'billing'),
        envOf('Job', 'billing-migrate'),
      );
    },
  );

  it('takes each shared credential from one secret key', () => {
    const refs = (deployment: string, variable: string) => {
      const found = containers.find((c) => c.manifest.metadata.name === deployment);
      const entry = found?.container.env?.find((e) => e.name === variable);
      return entry?.valueFrom?.secretKeyRef;
    };
    expect(refs('edge', 'BILLING_INTERNAL_TOKEN')).toEqual(refs('billing', 'EDGE_INTERNAL_TOKEN'));
    expect(refs('inference-worker', 'BILLING_INTERNAL_TOKEN')).toEqual(
      refs('billing', 'WORKER_INTERNAL_TOKEN'),
    );
    expect(refs('edge', 'DISPATCHER_INTERNAL_TOKEN')).toEqual(refs('dispatcher', 'INTERNAL_TOKEN'));
    // The dashboard's pods are edge to billing and the dispatcher: edge's credentials.
    expect(refs('edge-dashboard', 'BILLING_INTERNAL_TOKEN')).toEqual(
      refs('billing', 'EDGE_INTERNAL_TOKEN'),
    );
    expect(refs('edge-dashboard', 'DISPATCHER_INTERNAL_TOKEN')).toEqual(
      refs('dispatcher', 'INTERNAL_TOKEN'),
    );
    // Least privilege: edge and the worker never share a credential on billing.
    expect(refs('billing', 'EDGE_INTERNAL_TOKEN')).toBeDefined();
    expect(refs('billing', 'EDGE_INTERNAL_TOKEN')).not.toEqual(
      refs('billing', 'WORKER_INTERNAL_TOKEN'),
    );
  });

  it("points the services' URLs at the Services of their peers", () => {
    const services = manifests.filter((m) => m.kind === 'Service');
    const port = (name: string) => {
      const service = services.find((s) => s.metadata.name === name);
      return String((service?.spec as { ports: { port: number }[] }).ports[0]!.port);
    };
    for (const { manifest, container } of containers.filter(
      (c) => c.manifest.kind === 'Deployment',
    )) {
      const env = containerEnvironment(container, manifests, external);
      for (const [variable, target] of [
        ['BILLING_URL', 'billing'],
        ['DISPATCHER_URL', 'dispatcher'],
      ] as const) {
        if (env[variable] === undefined) continue;
        const url = urlOf(env[variable]);
        expect([manifest.metadata.name, url.hostname, url.port]).toEqual([
          manifest.metadata.name,
          target,
          port(target),
        ]);
      }
    }
  });
});
