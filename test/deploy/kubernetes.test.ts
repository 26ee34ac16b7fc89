import { existsSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import {
  DEPLOYMENTS,
  EDGE_DEPLOYMENTS,
  containerEnvironment,
  imageService,
  isReleaseJob,
  secretValues,
  workloads,
  type Container,
} from './support/k8s-env.js';
import { buildKustomization, configMapHash, type Manifest } from './support/kustomize.js';
import { validateAgainstSchema } from './support/k8s-schemas.js';
import { edgeSurfaces } from './support/schemas.js';

/*
 * k8s/: each overlay composed the way kustomize composes it (support/kustomize.ts), every object
 * validated against the Kubernetes OpenAPI schema of its apiVersion/kind (kubernetes-models),
 * then the rules of the deployment: probes, resources, security contexts, autoscaling,
 * disruption budgets, ingress and network policies.
 */

/** Where each layer puts its objects; the overlays also create that namespace. */
const NAMESPACES = {
  base: 'inference-gateway',
  dev: 'inference-gateway-dev',
  prod: 'inference-gateway',
} as const;
type Layer = keyof typeof NAMESPACES;
const SERVICES = ['edge', 'billing', 'inference-worker', 'dispatcher'];
/** Every Deployment: the services, and edge's image a second time for the dashboard. */
const DEPLOYMENT_NAMES = Object.keys(DEPLOYMENTS);
const AUTOSCALED = ['edge', 'inference-worker'];
/** What the Ingress routes, and the part of edge (EDGE_SURFACES) the pods behind it must serve. */
const PUBLIC_PATHS = { '/v1': 'api', '/dashboard': 'dashboard' } as const;
const OUTSIDE_WORLD = ['inference-worker', 'dispatcher'];
const DATASTORE_PORTS = [5432, 5671, 5672];
/** RabbitMQ's management API (HTTP, HTTPS): the broker-users Job's only destination. */
const MANAGEMENT_PORTS = [15672, 15671];

const build = (layer: Layer) =>
  buildKustomization(layer === 'base' ? 'k8s/base' : `k8s/overlays/${layer}`);
const baseSecrets = () => secretValues(buildKustomization('k8s/base'));
const named = (manifests: Manifest[], kind: string, name: string) =>
  manifests.find((m) => m.kind === kind && m.metadata.name === name);
const spec = (m: Manifest) => m.spec as Record<string, unknown>;
const nameLabel = 'app.kubernetes.io/name';

function quantity(value: string): number {
  const units: Record<string, number> = {
    m: 1e-3,
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
  };
  const match = /^(\d+(?:\.\d+)?)([a-zA-Z]*)$/.exec(String(value));
  if (!match || (match[2] && !(match[2] in units))) throw new Error(`bad quantity ${value}`);
  return Number(match[1]) * (match[2] ? units[match[2]]! : 1);
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

function matches(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every(({ key, operator, values }) => {
    if (operator === 'In') return values!.includes(labels[key]!);
    if (operator === 'NotIn') return !values!.includes(labels[key]!);
    if (operator === 'Exists') return key in labels;
    if (operator === 'DoesNotExist') return !(key in labels);
    throw new Error(`unknown operator ${operator}`);
  });
  return byLabel && byExpression;
}

interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}
interface Rule {
  from?: Peer[];
  to?: Peer[];
  ports?: { port?: number; protocol?: string }[];
}
interface Policy {
  name: string;
  podSelector: LabelSelector;
  policyTypes: string[];
  ingress?: Rule[];
  egress?: Rule[];
}

const policies = (manifests: Manifest[]): Policy[] =>
  manifests
    .filter((m) => m.kind === 'NetworkPolicy')
    .map((m) => ({ name: m.metadata.name, ...(m.spec as Omit<Policy, 'name'>) }));

const selecting = (all: Policy[], labels: Record<string, string>, type: 'Ingress' | 'Egress') =>
  all.filter((p) => p.policyTypes.includes(type) && matches(p.podSelector, labels));

/** A readable name for a peer: pod:edge, ns:monitoring/pod:prometheus, ip:0.0.0.0/0. */
function describePeer(peer: Peer): string {
  const pod =
    peer.podSelector?.matchLabels?.[nameLabel] ?? peer.podSelector?.matchLabels?.['k8s-app'];
  const ns = peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'];
  if (peer.ipBlock) return `ip:${peer.ipBlock.cidr}`;
  return [ns && `ns:${ns}`, pod && `pod:${pod}`].filter(Boolean).join('/') || 'anything';
}

function podLabelsOf(manifests: Manifest[], name: string): Record<string, string> {
  const workload = workloads(manifests).find((w) => w.podLabels[nameLabel] === name);
  if (!workload) throw new Error(`no workload ${name}`);
  return workload.podLabels;
}

describe.each(['base', 'dev', 'prod'] as const)('k8s %s', (layer) => {
  const dir = layer === 'base' ? 'k8s/base' : `k8s/overlays/${layer}`;

  it('builds, and every object validates against the Kubernetes schema of its kind', () => {
    const manifests = buildKustomization(dir);
    expect(manifests.length).toBeGreaterThan(20);
    for (const manifest of manifests) {
      expect(() => validateAgainstSchema(manifest)).not.toThrow();
    }
  });

  it('has unique names per kind and labels every object as part of the gateway', () => {
    const manifests = buildKustomization(dir);
    const keys = manifests.map((m) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const m of manifests) {
      expect([m.kind, m.metadata.labels?.['app.kubernetes.io/part-of']]).toEqual([
        m.kind,
        'inference-gateway',
      ]);
    }
  });
});

describe('an object the schemas refuse is caught', () => {
  it('rejects a Deployment whose container port is not a number', () => {
    const [deployment] = buildKustomization('k8s/base').filter((m) => m.kind === 'Deployment');
    const broken = structuredClone(deployment!) as Manifest;
    (spec(broken).template as { spec: { containers: Container[] } }).spec.containers[0]!.ports = [
      { name: 'http', containerPort: 'eighty' as unknown as number },
    ];
    expect(() => validateAgainstSchema(broken)).toThrow(/containerPort must be integer/);
  });
});

describe.each(Object.keys(NAMESPACES) as Layer[])('k8s %s, composed', (layer) => {
  const manifests = build(layer);
  const deployments = manifests.filter((m) => m.kind === 'Deployment');
  const all = workloads(manifests);
  const external = baseSecrets();

  it('puts everything in its namespace, which an overlay creates', () => {
    const namespace = NAMESPACES[layer];
    expect(named(manifests, 'Namespace', namespace) !== undefined).toBe(layer !== 'base');
    for (const m of manifests.filter((x) => x.kind !== 'Namespace')) {
      expect(`${m.kind}/${m.metadata.name} in ${m.metadata.namespace}`).toBe(
        `${m.kind}/${m.metadata.name} in ${namespace}`,
      );
    }
  });

  it("runs the four services from their images, edge's twice (overlays: tagged, from the registry)", () => {
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([...DEPLOYMENT_NAMES].sort());
    expect([...new Set(Object.values(DEPLOYMENTS))].sort()).toEqual([...SERVICES].sort());
    const image =
      layer === 'base'
        ? /^inference-gateway\/[a-z-]+$/
        : /^registry\.example\.com\/inference-gateway\/[a-z-]+:(?!latest$)[\w.-]+$/;
    for (const { podSpec } of all) {
      for (const container of podSpec.containers) expect(container.image).toMatch(image);
    }
    for (const { manifest, podSpec } of all.filter((w) => w.manifest.kind === 'Deployment')) {
      const { name } = manifest.metadata;
      expect([name, imageService(podSpec.containers[0]!.image)]).toEqual([name, DEPLOYMENTS[name]]);
    }
    // One image, one tag: the dashboard's pods never run another build than edge's.
    const edgeImages = all
      .filter((w) => EDGE_DEPLOYMENTS.includes(w.manifest.metadata.name))
      .map((w) => w.podSpec.containers[0]!.image);
    expect(edgeImages).toHaveLength(2);
    expect(new Set(edgeImages).size).toBe(1);
  });

  it('probes /readyz and /healthz on the port the service listens on', () => {
    for (const d of deployments) {
      const [workload] = workloads([d]);
      const container = workload!.podSpec.containers[0]!;
      const env = containerEnvironment(container, manifests, external);
      const http = container.ports?.find((p) => p.name === 'http');
      expect([d.metadata.name, http?.containerPort]).toEqual([d.metadata.name, Number(env.PORT)]);
      expect(env.HOST).toBe('0.0.0.0');
      expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    }
  });

  it('gives every container requests and limits, requests within limits', () => {
    for (const { manifest, podSpec } of all) {
      for (const container of podSpec.containers) {
        const where = `${manifest.metadata.name}/${container.name}`;
        for (const resource of ['cpu', 'memory']) {
          const request = container.resources?.requests?.[resource];
          const limit = container.resources?.limits?.[resource];
          expect([where, resource, typeof request, typeof limit]).toEqual([
            where,
            resource,
            'string',
            'string',
          ]);
          expect(quantity(request!)).toBeLessThanOrEqual(quantity(limit!));
        }
      }
    }
  });

  it('runs every pod as non-root, read-only, without privilege escalation', () => {
    for (const { manifest, podSpec } of all) {
      const pod = podSpec.securityContext as Record<string, unknown>;
      expect([manifest.metadata.name, pod.runAsNonRoot]).toEqual([manifest.metadata.name, true]);
      expect(pod.runAsUser).toBeGreaterThan(0);
      expect(podSpec.automountServiceAccountToken).toBe(false);
      for (const container of [...podSpec.containers, ...(podSpec.initContainers ?? [])]) {
        expect({ container: container.name, ...container.securityContext }).toMatchObject({
          container: container.name,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(container.securityContext?.privileged).not.toBe(true);
      }
    }
  });

  it("routes every Service to a Deployment's pods and a named container port", () => {
    for (const service of manifests.filter((m) => m.kind === 'Service')) {
      const selector = spec(service).selector as Record<string, string>;
      const targets = all.filter((w) => matches({ matchLabels: selector }, w.podLabels));
      expect([service.metadata.name, targets.map((t) => t.manifest.kind)]).toEqual([
        service.metadata.name,
        ['Deployment'],
      ]);
      for (const port of spec(service).ports as { targetPort: string }[]) {
        const names = targets[0]!.podSpec.containers
          .flatMap((c) => c.ports ?? [])
          .map((p) => p.name);
        expect(names).toContain(port.targetPort);
      }
    }
  });

  it('autoscales edge and the worker, whose Deployments leave the replica count to the HPA', () => {
    const hpas = manifests.filter((m) => m.kind === 'HorizontalPodAutoscaler');
    const targets = hpas.map((h) => (spec(h).scaleTargetRef as { name: string }).name).sort();
    expect(targets).toEqual(AUTOSCALED);
    for (const hpa of hpas) {
      const ref = spec(hpa).scaleTargetRef as { kind: string; name: string };
      const target = named(manifests, ref.kind, ref.name);
      expect(target?.kind).toBe('Deployment');
      expect(spec(target!).replicas).toBeUndefined();
      expect(spec(hpa).minReplicas).toBeLessThanOrEqual(spec(hpa).maxReplicas as number);
    }
    for (const d of deployments.filter((x) => !AUTOSCALED.includes(x.metadata.name))) {
      expect(spec(d).replicas).toBeGreaterThanOrEqual(1);
    }
  });

  it('has a disruption budget for every Deployment', () => {
    const budgets = manifests.filter((m) => m.kind === 'PodDisruptionBudget');
    for (const { manifest, podLabels } of all.filter((w) => w.manifest.kind === 'Deployment')) {
      const covering = budgets.filter((b) => matches(spec(b).selector as LabelSelector, podLabels));
      expect([manifest.metadata.name, covering.length]).toEqual([manifest.metadata.name, 1]);
    }
  });

  it('exposes the public API through edge and the dashboard through edge-dashboard, with TLS', () => {
    const ingresses = manifests.filter((m) => m.kind === 'Ingress');
    expect(ingresses).toHaveLength(1);
    const ingress = spec(ingresses[0]!) as {
      tls: { hosts: string[] }[];
      rules: {
        host: string;
        http: {
          paths: {
            path: string;
            pathType: string;
            backend: { service: { name: string; port: { name: string } } };
          }[];
        };
      }[];
    };
    const hosts = ingress.rules.map((r) => r.host);
    expect(ingress.tls.flatMap((t) => t.hosts).sort()).toEqual([...hosts].sort());
    const paths = ingress.rules.flatMap((r) => r.http.paths);
    expect(Object.fromEntries(paths.map((p) => [p.path, p.backend.service.name]))).toEqual({
      '/v1': 'edge',
      '/dashboard': 'edge-dashboard',
    });
    for (const { path, pathType, backend } of paths) {
      expect([path, pathType]).toEqual([path, 'Prefix']);
      // The operator API stays unexposed: no path's prefix reaches it.
      expect([path, '/admin/v1/accounts'.startsWith(path)]).toEqual([path, false]);
      const service = named(manifests, 'Service', backend.service.name);
      expect((spec(service!).ports as { name: string }[]).map((p) => p.name)).toContain(
        backend.service.port.name,
      );
      // The pods behind the path serve it (EDGE_SURFACES), and only them.
      const selector = spec(service!).selector as Record<string, string>;
      const pods = all.filter((w) => matches({ matchLabels: selector }, w.podLabels));
      expect(pods).toHaveLength(1);
      const env = containerEnvironment(pods[0]!.podSpec.containers[0]!, manifests, external);
      const surface = PUBLIC_PATHS[path as keyof typeof PUBLIC_PATHS];
      expect([path, edgeSurfaces(env)]).toEqual([path, expect.arrayContaining([surface])]);
    }
    // The bulkhead: the pods of /dashboard do not serve /v1, and those of /v1 not /dashboard.
    const surfacesOf = (name: string) => {
      const [workload] = all.filter((w) => w.manifest.metadata.name === name);
      return edgeSurfaces(
        containerEnvironment(workload!.podSpec.containers[0]!, manifests, external),
      );
    };
    expect(surfacesOf('edge-dashboard')).not.toContain('api');
    expect(surfacesOf('edge')).not.toContain('dashboard');
  });

  it('lets edge take the client from X-Forwarded-For only from private (pod) addresses', () => {
    // The ingress controller's pods are the only peers the NetworkPolicy lets reach edge's pods
    // (both Deployments), and the only ones edge believes: never everyone (a client could pick
    // its own address).
    for (const name of EDGE_DEPLOYMENTS) {
      const [edge] = all.filter((w) => w.manifest.metadata.name === name);
      const env = containerEnvironment(edge!.podSpec.containers[0]!, manifests, external);
      const proxies = (env.TRUSTED_PROXIES ?? '').split(',').map((entry) => entry.trim());
      expect([name, proxies.filter(Boolean).length > 0]).toEqual([name, true]);
      for (const entry of proxies) {
        expect(entry).toMatch(/^(10\.|172\.(1[6-9]|2\d|3[01])\.|192\.168\.|f[cd][0-9a-f]{0,2}:)/i);
      }
    }
  });

  it("migrates billing's and the dispatcher's databases in a Job, with their own commands", () => {
    const job = manifests.find((m) => isReleaseJob(m, 'gateway-migrate'));
    expect(job).toBeDefined();
    const [workload] = workloads([job!]);
    expect(['OnFailure', 'Never']).toContain(workload!.podSpec.restartPolicy);
    const commands = workload!.podSpec.containers.map((c) => [imageService(c.image), c.command]);
    expect(commands).toEqual([
      ['billing', ['node', 'dist/db/migrate-cli.js']],
      ['dispatcher', ['node', 'dist/db/migrate-cli.js']],
    ]);
    for (const [service] of commands) {
      expect(existsSync(`services/${service}/src/db/migrate-cli.ts`)).toBe(true);
    }
  });

  it("names each release's Jobs after its tag and marks them as GitOps hooks", () => {
    const tags = new Set(
      all.flatMap((w) => w.podSpec.containers.map((c) => /:([^:/@]+)$/.exec(c.image)?.[1] ?? '')),
    );
    // One release: every container of every workload runs the same tag (base: none).
    expect(tags.size).toBe(1);
    const [tag] = [...tags];
    for (const base of ['gateway-migrate', 'gateway-broker-users']) {
      const job = manifests.find((m) => isReleaseJob(m, base))!;
      expect(job.metadata.name).toBe(tag ? `${base}-${tag}` : base);
      // A DNS subdomain that also fits the pods' job-name label.
      expect(job.metadata.name).toMatch(/^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/);
      expect(job.metadata.annotations).toEqual({
        'argocd.argoproj.io/hook': 'Sync',
        'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
        'argocd.argoproj.io/sync-wave': '-1',
        'kustomize.toolkit.fluxcd.io/force': 'enabled',
      });
    }
    // Argo CD applies the namespace before the Jobs' wave.
    const namespace = manifests.find((m) => m.kind === 'Namespace');
    if (namespace) {
      const annotations = namespace.metadata.annotations as Record<string, string> | undefined;
      expect(Number(annotations?.['argocd.argoproj.io/sync-wave'])).toBeLessThan(-1);
    }
  });

  it('runs immutable image tags: a version or <branch>-<commit>, never main or latest', () => {
    if (layer === 'base') return;
    for (const { podSpec } of all) {
      for (const container of podSpec.containers) {
        const tag = /:([^:/@]+)$/.exec(container.image)![1]!;
        expect(tag).toMatch(/^(\d+\.\d+\.\d+([-+][\w.]+)?|[a-z]+-[0-9a-f]{7,40})$/);
        expect(container).not.toHaveProperty('imagePullPolicy');
      }
    }
  });

  it('names each ConfigMap after its content, so a changed setting rolls the pods that read it', () => {
    const configMaps = manifests.filter((m) => m.kind === 'ConfigMap');
    const bases = configMaps.map((m) => m.metadata.name.replace(/-[a-z0-9]{10}$/, '')).sort();
    expect(bases).toEqual(
      ['billing-config', 'dispatcher-config', 'edge-config', 'inference-worker-config'].sort(),
    );
    for (const m of configMaps) {
      const base = m.metadata.name.replace(/-[a-z0-9]{10}$/, '');
      const data = m.data as Record<string, string>;
      expect(m.metadata.name).toBe(`${base}-${configMapHash(base, data)}`);
      expect(m.metadata.annotations).toBeUndefined();
    }
    const names = new Set(configMaps.map((m) => m.metadata.name));
    for (const { podSpec } of all.filter((w) => w.manifest.kind === 'Deployment')) {
      for (const source of podSpec.containers[0]!.envFrom ?? []) {
        expect(names.has(source.configMapRef!.name)).toBe(true);
      }
    }
  });

  it('resolves every ConfigMap and Secret reference (production: the secret-store contract)', () => {
    // The overlays ship no Secret: never the base's published example tokens and keys (dev:
    // create-secret.sh makes random ones; production: the secret store).
    if (layer !== 'base') expect(manifests.some((m) => m.kind === 'Secret')).toBe(false);
    else expect(Object.keys(secretValues(manifests))).toEqual(['gateway-secrets']);
    for (const { podSpec } of all) {
      for (const container of podSpec.containers) {
        expect(() => containerEnvironment(container, manifests, external)).not.toThrow();
      }
    }
  });

  describe('network policies', () => {
    const rules = policies(manifests);
    const labels = (name: string) => podLabelsOf(manifests, name);

    it('deny everything by default and allow DNS to every pod', () => {
      const deny = rules.find((p) => p.name === 'default-deny')!;
      expect(deny.podSelector).toEqual({});
      expect(deny.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
      expect(deny.ingress ?? []).toEqual([]);
      expect(deny.egress ?? []).toEqual([]);
      const dns = rules.find((p) => p.name === 'allow-dns')!;
      expect(dns.podSelector).toEqual({});
      expect(dns.egress?.flatMap((r) => r.to ?? []).map(describePeer)).toEqual([
        'ns:kube-system/pod:kube-dns',
      ]);
    });

    it('select only pods that exist', () => {
      for (const policy of rules.filter((p) => Object.keys(p.podSelector).length > 0)) {
        const selected = all.filter((w) => matches(policy.podSelector, w.podLabels));
        expect([policy.name, selected.length > 0]).toEqual([policy.name, true]);
      }
    });

    it('let billing be reached only from edge, the dashboard and the worker (and Prometheus)', () => {
      const peers = selecting(rules, labels('billing'), 'Ingress').flatMap((p) =>
        (p.ingress ?? []).flatMap((r) => {
          expect(r.ports).toEqual([{ protocol: 'TCP', port: 8081 }]);
          return (r.from ?? [{}]).map(describePeer);
        }),
      );
      expect(peers.sort()).toEqual([
        'ns:monitoring/pod:prometheus',
        'pod:edge',
        'pod:edge-dashboard',
        'pod:inference-worker',
      ]);
    });

    it("let edge's pods be reached from the ingress controller, the dispatcher and the worker from them", () => {
      const from = (name: string) =>
        selecting(rules, labels(name), 'Ingress').flatMap((p) =>
          (p.ingress ?? []).flatMap((r) => (r.from ?? [{}]).map(describePeer)),
        );
      expect(from('edge')).toContain('ns:ingress-nginx');
      expect(from('dispatcher')).toContain('pod:edge');
      expect(from('dispatcher')).toContain('pod:edge-dashboard');
      // The worker takes synchronous jobs from edge directly (ADR 0072); never from the dashboard.
      expect(from('inference-worker')).toEqual(['pod:edge', 'ns:monitoring/pod:prometheus']);
      // The dashboard's pods: the ingress controller and Prometheus, on edge's port only.
      const dashboard = selecting(rules, labels('edge-dashboard'), 'Ingress').flatMap(
        (p) => p.ingress ?? [],
      );
      expect(dashboard.flatMap((r) => r.ports ?? [])).toEqual([{ protocol: 'TCP', port: 8080 }]);
      expect(from('edge-dashboard').sort()).toEqual([
        'ns:ingress-nginx',
        'ns:monitoring/pod:prometheus',
      ]);
    });

    it('let the dashboard reach billing and the dispatcher, nothing else: never RabbitMQ', () => {
      const egress = selecting(rules, labels('edge-dashboard'), 'Egress');
      expect(egress.map((p) => p.name).sort()).toEqual([
        'allow-dns',
        'default-deny',
        'edge-dashboard',
      ]);
      expect(egress.map((p) => p.name)).not.toContain('rabbitmq-egress');
      const destinations = egress
        .filter((p) => p.name !== 'allow-dns')
        .flatMap((p) => p.egress ?? [])
        .flatMap((r) =>
          (r.to ?? [{}]).flatMap((peer) =>
            (r.ports ?? [{}]).map((port) => `${describePeer(peer)}:${port.port ?? 'any'}`),
          ),
        );
      expect(destinations.sort()).toEqual(['pod:billing:8081', 'pod:dispatcher:8083']);
    });

    it('let only the dispatcher and the worker reach outside the cluster', () => {
      for (const name of [...DEPLOYMENT_NAMES, 'migrate', 'broker-users']) {
        const egress = selecting(rules, labels(name), 'Egress').flatMap((p) => p.egress ?? []);
        const open = egress.filter((r) =>
          (r.to ?? [{ ipBlock: { cidr: '0.0.0.0/0' } }]).some(
            (peer) =>
              peer.ipBlock && (peer.ipBlock.cidr === '0.0.0.0/0' || peer.ipBlock.cidr === '::/0'),
          ),
        );
        expect([name, open.length > 0]).toEqual([name, OUTSIDE_WORLD.includes(name)]);
        if (OUTSIDE_WORLD.includes(name)) continue;
        // Anything else outside the cluster: the data stores only, by address and port (the
        // broker-users Job: RabbitMQ's management API only).
        const allowed = name === 'broker-users' ? MANAGEMENT_PORTS : DATASTORE_PORTS;
        for (const rule of egress.filter((r) => (r.to ?? []).some((peer) => peer.ipBlock))) {
          const ports = (rule.ports ?? []).map((p) => p.port);
          expect([name, ports.length > 0]).toEqual([name, true]);
          for (const port of ports) expect([name, allowed.includes(port!)]).toEqual([name, true]);
        }
      }
    });

    it('let each service reach what it calls', () => {
      const reaches = (from: string, to: string, port: number) =>
        selecting(rules, labels(from), 'Egress').some((p) =>
          (p.egress ?? []).some(
            (r) =>
              (r.ports ?? []).some((x) => x.port === port) &&
              (r.to ?? []).some(
                (peer) => matches(peer.podSelector, labels(to)) && !peer.namespaceSelector,
              ),
          ),
        );
      expect(reaches('edge', 'billing', 8081)).toBe(true);
      expect(reaches('edge', 'dispatcher', 8083)).toBe(true);
      expect(reaches('edge-dashboard', 'billing', 8081)).toBe(true);
      expect(reaches('edge-dashboard', 'dispatcher', 8083)).toBe(true);
      expect(reaches('inference-worker', 'billing', 8081)).toBe(true);
      const storeCidrs = (policy: string) =>
        rules
          .find((p) => p.name === policy)!
          .egress!.flatMap((r) => (r.to ?? []).map(describePeer));
      for (const [policy, clients] of [
        ['postgres-egress', ['billing', 'dispatcher', 'edge', 'inference-worker', 'migrate']],
        ['rabbitmq-egress', ['edge', 'inference-worker', 'dispatcher', 'billing']],
      ] as const) {
        expect(storeCidrs(policy).every((peer) => peer.startsWith('ip:'))).toBe(true);
        for (const client of clients) {
          expect(selecting(rules, labels(client), 'Egress').map((p) => p.name)).toContain(policy);
        }
        // Those clients and no other pod (not the dashboard's, which has no broker user).
        const selector = rules.find((p) => p.name === policy)!.podSelector;
        const selected = all.filter((w) => matches(selector, w.podLabels));
        expect([policy, selected.map((w) => w.podLabels[nameLabel]).sort()]).toEqual([
          policy,
          [...clients].sort(),
        ]);
      }
    });
  });
});

describe('generated ConfigMaps', () => {
  it("change name with any setting: an overlay's value rolls the Deployment", () => {
    expect(configMapHash('billing-config', { LOG_LEVEL: 'info' })).not.toBe(
      configMapHash('billing-config', { LOG_LEVEL: 'debug' }),
    );
    const envFromOf = (layer: Layer) =>
      workloads(build(layer)).find((w) => w.manifest.metadata.name === 'billing')!.podSpec
        .containers[0]!.envFrom;
    // dev's debug logs and smaller pool: another ConfigMap name, so another pod template.
    expect(envFromOf('dev')).not.toEqual(envFromOf('base'));
  });
});
