import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { workloads, type Workload } from './support/k8s-env.js';
import { validateAgainstSchema } from './support/k8s-schemas.js';
import { buildKustomization, type Manifest } from './support/kustomize.js';
import { knownKeys } from './support/schemas.js';

/*
 * The optional component k8s/components/tracing turns the services' traces on
 * (the standard OTEL_* variables in each service's ConfigMap) and lets every gateway pod reach
 * the collector's OTLP/HTTP port, and nothing more. Without it, no process exports anything.
 */

const scratch = mkdtempSync(path.join(tmpdir(), 'k8s-tracing-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function overlay(name: string, components: string[]): Manifest[] {
  const dir = mkdtempSync(path.join(scratch, `${name}-`));
  const relative = (to: string) => path.relative(dir, path.resolve(to));
  const { namespace } = parse(readFileSync(`k8s/overlays/${name}/kustomization.yaml`, 'utf8')) as {
    namespace: string;
  };
  writeFileSync(
    path.join(dir, 'kustomization.yaml'),
    [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      `namespace: ${namespace}`,
      `resources: [${relative(`k8s/overlays/${name}`)}]`,
      `components: [${components.map((c) => relative(`k8s/components/${c}`)).join(', ')}]`,
    ].join('\n'),
  );
  return buildKustomization(dir);
}

/** What the ConfigMaps a Deployment's container reads (envFrom) set. */
function configOf(workload: Workload, manifests: Manifest[]): Record<string, string> {
  const names = (workload.podSpec.containers[0]!.envFrom ?? []).flatMap((source) =>
    source.configMapRef ? [source.configMapRef.name] : [],
  );
  return Object.assign(
    {},
    ...names.map(
      (name) =>
        manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === name)!.data as Record<
          string,
          string
        >,
    ),
  );
}

const deployments = (manifests: Manifest[]) =>
  workloads(manifests).filter((w) => w.manifest.kind === 'Deployment');

describe.each(['dev', 'prod'])('k8s %s with components/tracing', (name) => {
  const manifests = overlay(name, ['tracing']);

  it('validates every object against its schema', () => {
    for (const manifest of manifests) expect(() => validateAgainstSchema(manifest)).not.toThrow();
  });

  it('turns the exporter on in every gateway Deployment, with variables tracing reads', () => {
    const traced = deployments(manifests);
    expect(traced.length).toBeGreaterThanOrEqual(5);
    for (const workload of traced) {
      const config = configOf(workload, manifests);
      expect([workload.manifest.metadata.name, config.OTEL_TRACES_EXPORTER]).toEqual([
        workload.manifest.metadata.name,
        'otlp',
      ]);
      expect(config.OTEL_EXPORTER_OTLP_ENDPOINT).toMatch(/^http:\/\/[a-z0-9.-]+:4318$/);
      // The rest of the service's settings are kept (merged, not replaced).
      expect(config.PORT).toMatch(/^\d+$/);
    }
    const added = readFileSync('k8s/components/tracing/tracing.env', 'utf8')
      .split('\n')
      .filter((line) => /^[A-Z]/.test(line))
      .map((line) => line.split('=')[0]!);
    for (const key of added) expect(knownKeys('edge')).toContain(key);
  });

  it("opens one egress for every gateway pod: the collector's OTLP port", () => {
    const policy = manifests.find(
      (m) => m.kind === 'NetworkPolicy' && m.metadata.name === 'otlp-egress',
    )!;
    const spec = policy.spec as {
      podSelector: { matchLabels: Record<string, string> };
      policyTypes: string[];
      egress: { to: unknown[]; ports: unknown[] }[];
      ingress?: unknown;
    };
    expect(spec.policyTypes).toEqual(['Egress']);
    expect(spec.ingress).toBeUndefined();
    for (const workload of deployments(manifests)) {
      const selected = Object.entries(spec.podSelector.matchLabels).every(
        ([key, value]) => workload.podLabels[key] === value,
      );
      expect([workload.manifest.metadata.name, selected]).toEqual([
        workload.manifest.metadata.name,
        true,
      ]);
    }
    expect(spec.egress).toEqual([
      {
        to: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } },
          },
        ],
        ports: [{ protocol: 'TCP', port: 4318 }],
      },
    ]);
  });
});

describe.each(['dev', 'prod'])('k8s %s without it', (name) => {
  it('sets no OTEL_* variable: tracing stays off', () => {
    const manifests = buildKustomization(`k8s/overlays/${name}`);
    for (const workload of deployments(manifests)) {
      const keys = Object.keys(configOf(workload, manifests));
      expect(keys.filter((key) => key.startsWith('OTEL_'))).toEqual([]);
    }
    expect(manifests.some((m) => m.metadata.name === 'otlp-egress')).toBe(false);
  });
});
