import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { loadCompose } from './support/compose.js';
import {
  DOCKERFILE,
  chainEnv,
  chainInstructions,
  copiedFrom,
  lastOf,
  parseDockerfile,
  stageChain,
} from './support/dockerfile.js';
import { readDashboard, allPanels } from './support/promql.js';
import { GATEWAY_SERVICES, MIGRATED_SERVICES, defaultPort } from './support/schemas.js';

/*
 * docker-compose.yml and the images, checked without a Docker engine: what `docker compose up`
 * would start, in which order, from which Dockerfile targets, and how each image is built and run.
 */

const compose = loadCompose();
const services = compose.services;
const service = (name: string) => {
  const found = services[name];
  if (!found) throw new Error(`compose has no service ${name}`);
  return found;
};

const { global: dockerfileGlobal, stages } = parseDockerfile();

/** Each image, the Dockerfile's target that builds it. */
const IMAGES: [string, string][] = [
  ...GATEWAY_SERVICES.map((name) => [name, name] as [string, string]),
  ['stand-ins', 'stand-ins'],
];

describe('docker-compose.yml', () => {
  it('loads in Compose v2 and in docker-compose 1.29: no top-level key 1.29 refuses (`name`)', () => {
    // 1.29's schema allows only these at the top, besides extension fields.
    const accepted = ['version', 'services', 'volumes', 'networks', 'secrets', 'configs'];
    const refused = compose.topLevelKeys.filter(
      (k) => !k.startsWith('x-') && !accepted.includes(k),
    );
    expect(refused).toEqual([]);
  });

  it('runs the data stores, the migration, the four services, the stand-ins and monitoring', () => {
    expect(Object.keys(services).sort()).toEqual(
      [
        'postgres',
        'rabbitmq',
        'rabbitmq-users',
        'migrate',
        'dispatcher-migrate',
        ...GATEWAY_SERVICES,
        'stand-in-node',
        'stand-in-provider',
        'seed',
        'prometheus',
        'grafana',
        'otel-collector',
        'jaeger',
      ].sort(),
    );
    expect(service('rabbitmq').image).toMatch(/^rabbitmq:[\d.]+-management$/);
    expect(service('postgres').image).toMatch(/^postgres:\d+/);
  });

  it("builds every gateway service from the Dockerfile's target of its name, the repository as context", () => {
    for (const name of GATEWAY_SERVICES) {
      expect(service(name).build).toEqual({ context: '.', dockerfile: DOCKERFILE, target: name });
      expect(service(name).image).toBe(`inference-gateway/${name}:local`);
    }
    // Whatever builds an image names the target that image is made from.
    for (const [name, definition] of Object.entries(services)) {
      if (!definition.build) continue;
      expect([name, existsSync(definition.build.dockerfile)]).toEqual([name, true]);
      const target = definition.build.target!;
      expect([name, stages.some((s) => s.name === target)]).toEqual([name, true]);
      expect([name, definition.image]).toEqual([name, `inference-gateway/${target}:local`]);
    }
  });

  it('starts in dependency order: data stores, migration, billing, then its clients', () => {
    for (const [name, definition] of Object.entries(services)) {
      for (const dependency of Object.keys(definition.depends_on)) {
        expect([name, dependency in services]).toEqual([name, true]);
      }
    }
    expect(service('billing').depends_on.migrate).toEqual({
      condition: 'service_completed_successfully',
    });
    expect(service('dispatcher').depends_on['dispatcher-migrate']).toEqual({
      condition: 'service_completed_successfully',
    });
    for (const [, oneShot] of MIGRATED_SERVICES) {
      expect(service(oneShot).depends_on.postgres).toEqual({ condition: 'service_healthy' });
    }
    expect(service('edge').depends_on.billing).toEqual({ condition: 'service_healthy' });
    expect(service('edge').depends_on.dispatcher).toEqual({ condition: 'service_healthy' });
    expect(service('inference-worker').depends_on.billing).toEqual({
      condition: 'service_healthy',
    });
    expect(service('dispatcher').depends_on.rabbitmq).toEqual({ condition: 'service_healthy' });
    // The broker users exist before any service connects; each queue's consumer (which declares
    // it) is up before the services that publish to it.
    expect(service('rabbitmq-users').depends_on.rabbitmq).toEqual({ condition: 'service_healthy' });
    for (const name of GATEWAY_SERVICES) {
      expect([name, service(name).depends_on['rabbitmq-users']]).toEqual([
        name,
        { condition: 'service_completed_successfully' },
      ]);
    }
    expect(service('inference-worker').depends_on.dispatcher).toEqual({
      condition: 'service_healthy',
    });
    expect(service('edge').depends_on['inference-worker']).toEqual({
      condition: 'service_healthy',
    });
    // No cycles: a topological order exists.
    const placed = new Set<string>();
    while (placed.size < Object.keys(services).length) {
      const next = Object.entries(services).find(
        ([name, d]) => !placed.has(name) && Object.keys(d.depends_on).every((x) => placed.has(x)),
      );
      expect(next).toBeDefined();
      placed.add(next![0]);
    }
  });

  it.each(MIGRATED_SERVICES)(
    "migrates with %s's image and its migration command (%s)",
    (owner, oneShot) => {
      const migrate = service(oneShot);
      expect(migrate.image).toBe(service(owner).image);
      expect(migrate.entrypoint).toEqual(['node', 'dist/db/migrate-cli.js']);
      expect(existsSync(`services/${owner}/src/db/migrate-cli.ts`)).toBe(true);
      expect(migrate.restart).toBe('no');
    },
  );

  it("provisions the broker users with the messaging package's command, hardened", () => {
    const users = service('rabbitmq-users');
    expect(users.image).toBe(service('billing').image);
    const [node, script] = users.entrypoint!;
    expect(node).toBe('node');
    // In the image, workspace packages are injected under node_modules with their dist/.
    const source = script!
      .replace('node_modules/@gateway/messaging/dist/', 'packages/messaging/src/')
      .replace(/\.js$/, '.ts');
    expect(existsSync(source)).toBe(true);
    expect(users).toMatchObject({
      restart: 'no',
      read_only: true,
      cap_drop: ['ALL'],
      security_opt: ['no-new-privileges:true'],
    });
  });

  it('reports a gateway service healthy once /readyz answers, on its own port', () => {
    for (const name of GATEWAY_SERVICES) {
      const test = service(name).healthcheck?.test ?? [];
      expect(test.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
      expect(test[3]).toContain('/readyz');
      expect(test[3]).toContain('process.env.PORT');
    }
  });

  it('hardens the gateway containers and publishes ports on loopback only', () => {
    for (const name of GATEWAY_SERVICES) {
      expect(service(name)).toMatchObject({
        read_only: true,
        cap_drop: ['ALL'],
        security_opt: ['no-new-privileges:true'],
      });
    }
    const published = Object.values(services).flatMap((s) => s.ports ?? []);
    expect(published.length).toBeGreaterThan(0);
    for (const port of published) expect(port).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    expect(service('edge').ports).toEqual(['127.0.0.1:8080:8080']);
    expect(service('rabbitmq').ports).toEqual(['127.0.0.1:15672:15672']);
  });

  it('traces only when asked: exporter off by default, collector and Jaeger in the tracing profile', () => {
    for (const name of GATEWAY_SERVICES) {
      expect(service(name).environment).toMatchObject({
        OTEL_TRACES_EXPORTER: 'none',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318',
      });
    }
    const traced = loadCompose(undefined, { OTEL_TRACES_EXPORTER: 'otlp' });
    expect(traced.services.edge!.environment.OTEL_TRACES_EXPORTER).toBe('otlp');
    for (const name of ['otel-collector', 'jaeger']) {
      expect(service(name).profiles).toEqual(['tracing']);
    }
    expect(service('jaeger').ports).toEqual(['127.0.0.1:16686:16686']);
    const collector = parse(readFileSync('infra/otel/collector.yaml', 'utf8')) as {
      exporters: Record<string, { endpoint: string }>;
      service: { pipelines: { traces: { receivers: string[]; exporters: string[] } } };
    };
    expect(collector.service.pipelines.traces.receivers).toEqual(['otlp']);
    const [exporter] = collector.service.pipelines.traces.exporters;
    expect(collector.exporters[exporter!]!.endpoint).toBe('jaeger:4317');
  });

  it('believes X-Forwarded-For from nobody: no proxy runs in front of edge', () => {
    // Clients reach edge's published port directly; a trusted proxy here would let any of them
    // choose the address its failed authentications count against.
    expect(service('edge').environment.TRUSTED_PROXIES).toBe('');
  });

  it('mounts files that exist', () => {
    for (const [name, definition] of Object.entries(services)) {
      for (const volume of definition.volumes ?? []) {
        const [source] = volume.split(':');
        if (source!.startsWith('.')) expect([name, existsSync(source!)]).toEqual([name, true]);
        else expect(Object.keys(compose.volumes ?? {})).toContain(source);
      }
    }
  });

  it('enables the RabbitMQ management UI and Prometheus plugins', () => {
    const mount = service('rabbitmq').volumes!.find((v) =>
      v.endsWith(':/etc/rabbitmq/enabled_plugins:ro'),
    );
    const plugins = readFileSync(mount!.split(':')[0]!, 'utf8');
    expect(plugins.trim()).toMatch(/^\[.*rabbitmq_management.*\]\.$/);
    expect(plugins).toContain('rabbitmq_prometheus');
  });

  it('runs the stand-ins on loopback inside the worker, where its configuration finds them', () => {
    const worker = service('inference-worker').environment;
    const argument = (args: string[], flag: string) => args[args.indexOf(flag) + 1];
    const node = service('stand-in-node');
    const provider = service('stand-in-provider');
    for (const standIn of [node, provider]) {
      expect(standIn.network_mode).toBe('service:inference-worker');
      expect(argument(standIn.command!, '--host')).toBe('127.0.0.1');
      expect(standIn.build).toEqual({ context: '.', dockerfile: DOCKERFILE, target: 'stand-ins' });
    }
    expect(node.command![0]).toBe('node');
    expect(provider.command![0]).toBe('provider');
    const providerUrl = new URL(worker.EXTERNAL_PROVIDER_URL!);
    expect([providerUrl.hostname, providerUrl.port]).toEqual([
      '127.0.0.1',
      argument(provider.command!, '--port'),
    ]);
    expect(worker.EXTERNAL_PROVIDER_API_KEY).toBe(argument(provider.command!, '--api-key'));
    const seed = service('seed').environment;
    const nodeUrl = new URL(seed.DEMO_NODE_URL!);
    expect([nodeUrl.hostname, nodeUrl.port]).toEqual([
      '127.0.0.1',
      argument(node.command!, '--port'),
    ]);
    expect(argument(provider.command!, '--models')!.split(',')).toContain(seed.DEMO_PROVIDER_MODEL);
    expect(seed.GATEWAY_ADMIN_TOKEN).toBe(service('edge').environment.ADMIN_TOKEN);
  });
});

describe.each(IMAGES)('the %s image (Dockerfile target %s)', (name, target) => {
  const chain = stageChain(stages, target);
  const image = chainInstructions(stages, target);
  const sources = copiedFrom(stages, target);
  const files = sources[0]!;

  it('is built in stages on a Node LTS pinned by digest, and ships the build output only', () => {
    const base = dockerfileGlobal.find((i) => i.startsWith('ARG NODE_IMAGE='));
    expect(base).toMatch(
      /^ARG NODE_IMAGE=node:(22|24)(\.[\d.]+)?-bookworm-slim@sha256:[0-9a-f]{64}$/,
    );
    // The image and the stage it copies from both rest on that base, nothing else.
    expect(chain[0]!.base).toBe('${NODE_IMAGE}');
    expect(stageChain(stages, files)[0]!.base).toBe('${NODE_IMAGE}');
    // The seed one-shot runs on the same pinned Node (no second, unpinned base to scan).
    expect(compose.services.seed!.image).toBe(base!.slice('ARG NODE_IMAGE='.length));
    // One directory from a build stage, and no command run in the image itself.
    expect(sources).toEqual([files]);
    expect(image.filter((i) => i.startsWith('COPY ') || i.startsWith('ADD '))).toEqual([
      `COPY --from=${files} /out ./`,
    ]);
    expect(image.some((i) => /^RUN\s/.test(i))).toBe(false);
  });

  it('installs from the lockfile and deploys its own package with production dependencies only', () => {
    const build = chainInstructions(stages, files);
    expect(build).toContain('RUN pnpm install --offline --frozen-lockfile');
    const pkg = `@gateway/${name}`;
    const deploys = build.filter((i) => / deploy --prod /.test(i));
    expect(deploys).toEqual([
      `RUN pnpm --filter ${pkg} deploy --prod --offline /out && cd /out && rm -rf $DEPLOY_DROP`,
    ]);
    // Sources and tooling are dropped from the deployed package.
    expect(chainEnv(stages, files).DEPLOY_DROP!.split(' ')).toEqual(
      expect.arrayContaining(['src', 'tsconfig.json', 'pnpm-lock.yaml']),
    );
    if (name === 'billing')
      expect(build.join('\n')).toContain('pnpm --filter @gateway/billing run generate');
  });

  it('runs as a non-root user, in production mode, with Node as PID 1', () => {
    const env = chainEnv(stages, target);
    expect(env.NODE_ENV).toBe('production');
    expect(lastOf(stages, target, 'USER')).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
    expect(lastOf(stages, target, 'WORKDIR')).toBe('/app');
    const args = JSON.parse(lastOf(stages, target, 'ENTRYPOINT')!) as string[];
    expect(args[0]).toBe('node');
    const entry = args[1]!.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts');
    const dir = name === 'stand-ins' ? 'packages/stand-ins' : `services/${name}`;
    expect(existsSync(path.join(dir, entry))).toBe(true);
    const exposed = image.filter((i) => i.startsWith('EXPOSE '));
    if (name === 'stand-ins') {
      expect(args).toEqual(['node', 'dist/cli.js']);
      expect(lastOf(stages, target, 'CMD')).toBe('["node"]');
      expect(exposed).toEqual([]);
    } else {
      expect(args).toEqual(['node', 'dist/main.js']);
      expect(env.HOST).toBe('0.0.0.0');
      expect(env.PORT).toBe(String(defaultPort(name as never)));
      expect(exposed).toEqual([`EXPOSE ${defaultPort(name as never)}`]);
    }
  });

  it("carries another image's extras only if it is that image (edge's dashboard, billing's pruning)", () => {
    const build = chainInstructions(stages, files).join('\n');
    expect(build.includes('pnpm --filter @gateway/dashboard run build')).toBe(name === 'edge');
    expect('DASHBOARD_DIR' in chainEnv(stages, target)).toBe(name === 'edge');
    expect(build.includes('infra/docker/prune-deploy.mjs /out prisma')).toBe(name === 'billing');
  });
});

describe('the edge image', () => {
  it('ships the built dashboard and points DASHBOARD_DIR at it', () => {
    const build = chainInstructions(stages, copiedFrom(stages, 'edge')[0]!).join('\n');
    expect(build).toContain('pnpm --filter @gateway/dashboard run build');
    expect(build).toContain('cp -r apps/dashboard/dist /out/dashboard');
    expect(chainEnv(stages, 'edge').DASHBOARD_DIR).toBe('/app/dashboard');
  });
});

describe('the billing image', () => {
  it('drops the Prisma CLI and the client runtimes of other databases after deploy', () => {
    const build = chainInstructions(stages, copiedFrom(stages, 'billing')[0]!);
    const deploy = build.findIndex((i) => / deploy --prod /.test(i));
    const prune = build.findIndex((i) => i.includes('infra/docker/prune-deploy.mjs /out prisma'));
    expect(deploy).toBeGreaterThanOrEqual(0);
    expect(prune).toBeGreaterThan(deploy);
    expect(build[prune]).toContain("-name '*mysql*'");
    expect(existsSync('infra/docker/prune-deploy.mjs')).toBe(true);
  });
});

describe('.dockerignore', () => {
  it('keeps dependencies, build output and local state out of the build context', () => {
    const ignored = readFileSync('.dockerignore', 'utf8').split('\n');
    for (const entry of ['**/node_modules', '**/dist', '**/src/generated', '.git', '.data']) {
      expect(ignored).toContain(entry);
    }
    // What the images build from must stay in the context.
    for (const needed of ['apps', 'packages', 'services', 'pnpm-lock.yaml', 'infra/docker']) {
      expect(ignored).not.toContain(needed);
    }
  });
});

describe('monitoring in compose', () => {
  const prometheus = parse(readFileSync('infra/prometheus/prometheus.yml', 'utf8')) as {
    rule_files: string[];
    scrape_configs: {
      job_name: string;
      metrics_path: string;
      static_configs: { targets: string[]; labels?: Record<string, string> }[];
    }[];
  };

  it('scrapes every gateway service on its port, and RabbitMQ per object', () => {
    const targets = (job: string) =>
      prometheus.scrape_configs
        .filter((c) => c.job_name === job)
        .flatMap((c) => c.static_configs.flatMap((s) => s.targets));
    const expected = GATEWAY_SERVICES.map((name) => `${name}:${service(name).environment.PORT}`);
    // The job and namespace the alerts and the dashboard select on (alerts.yml).
    expect(targets('inference-gateway').sort()).toEqual(expected.sort());
    const gateway = prometheus.scrape_configs.find((c) => c.job_name === 'inference-gateway')!;
    for (const group of gateway.static_configs) {
      expect(group.labels).toEqual({ namespace: 'compose' });
    }
    const rabbit = prometheus.scrape_configs.find((c) => c.job_name === 'rabbitmq')!;
    expect(rabbit.metrics_path).toBe('/metrics/per-object');
    expect(targets('rabbitmq')).toEqual(['rabbitmq:15692']);
    for (const rules of prometheus.rule_files) {
      expect(existsSync(path.join('infra/prometheus', rules))).toBe(true);
    }
    expect(service('prometheus').volumes).toContain('./infra/prometheus:/etc/prometheus:ro');
  });

  it("provisions Grafana with the Prometheus datasource and the project's dashboard", () => {
    const datasources = parse(
      readFileSync('infra/grafana/provisioning/datasources/prometheus.yml', 'utf8'),
    ) as { datasources: { uid: string; url: string }[] };
    const providers = parse(
      readFileSync('infra/grafana/provisioning/dashboards/inference-gateway.yml', 'utf8'),
    ) as { providers: { options: { path: string } }[] };
    expect(datasources.datasources[0]).toMatchObject({
      uid: 'prometheus',
      url: 'http://prometheus:9090',
    });
    const mounts = service('grafana').volumes ?? [];
    const dashboardsDir = providers.providers[0]!.options.path;
    expect(mounts).toContain(`./infra/grafana/dashboards:${dashboardsDir}:ro`);
    expect(mounts).toContain('./infra/grafana/provisioning:/etc/grafana/provisioning:ro');
    // The dashboard names no datasource uid: its `datasource` variable picks one (compose's is
    // the default, so it is picked on load).
    expect(datasources.datasources[0]).toMatchObject({ type: 'prometheus', isDefault: true });
    for (const panel of allPanels(readDashboard().panels).filter((p) => p.type !== 'row')) {
      expect([panel.title, panel.datasource?.uid]).toEqual([panel.title, '${datasource}']);
    }
  });
});
