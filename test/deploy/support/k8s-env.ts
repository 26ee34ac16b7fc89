import type { Manifest } from './kustomize.js';
import type { GatewayService } from './schemas.js';

/*
 * What environment a container of a built overlay gets: names from `env` and `envFrom`, and
 * values resolved from the overlay's ConfigMaps and Secrets. A Secret the overlay does not ship
 * (production reads it from the secret store) resolves against `externalSecrets`: the keys and
 * example values of base/secret.yaml, the contract that store must fulfil.
 */

type Json = Record<string, unknown>;

export interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: {
      secretKeyRef?: { name: string; key: string };
      configMapKeyRef?: { name: string; key: string };
      fieldRef?: unknown;
    };
  }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string }; prefix?: string }[];
  readinessProbe?: { httpGet?: { path: string; port: number | string } };
  livenessProbe?: { httpGet?: { path: string; port: number | string } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Json;
}

export interface Workload {
  manifest: Manifest;
  podSpec: Json & { containers: Container[]; initContainers?: Container[] };
  podLabels: Record<string, string>;
}

export function workloads(manifests: Manifest[]): Workload[] {
  return manifests
    .filter((m) => m.kind === 'Deployment' || m.kind === 'Job')
    .map((manifest) => {
      const template = (manifest.spec as Json).template as Json;
      return {
        manifest,
        podSpec: template.spec as Workload['podSpec'],
        podLabels: ((template.metadata as Json | undefined)?.labels ?? {}) as Record<
          string,
          string
        >,
      };
    });
}

export type SecretData = Record<string, Record<string, string>>;

/** The string values of every Secret in a list of manifests (stringData and base64 data). */
export function secretValues(manifests: Manifest[]): SecretData {
  const secrets: SecretData = {};
  for (const m of manifests.filter((x) => x.kind === 'Secret')) {
    const decoded = Object.fromEntries(
      Object.entries((m.data ?? {}) as Record<string, string>).map(([k, v]) => [
        k,
        Buffer.from(v, 'base64').toString('utf8'),
      ]),
    );
    secrets[m.metadata.name] = { ...decoded, ...((m.stringData ?? {}) as Record<string, string>) };
  }
  return secrets;
}

function configMapData(manifests: Manifest[], name: string): Record<string, string> {
  const configMap = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === name);
  if (!configMap) throw new Error(`ConfigMap ${name} does not exist`);
  return (configMap.data ?? {}) as Record<string, string>;
}

/** The environment of one container: every variable it sets, with its value. */
export function containerEnvironment(
  container: Container,
  manifests: Manifest[],
  externalSecrets: SecretData = {},
): Record<string, string> {
  const secrets = { ...externalSecrets, ...secretValues(manifests) };
  const secretValue = (name: string, key: string) => {
    const value = secrets[name]?.[key];
    if (value === undefined) throw new Error(`Secret ${name} has no key ${key}`);
    return value;
  };
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const prefix = source.prefix ?? '';
    if (source.configMapRef) {
      for (const [k, v] of Object.entries(configMapData(manifests, source.configMapRef.name))) {
        env[prefix + k] = v;
      }
    } else if (source.secretRef) {
      const data = secrets[source.secretRef.name];
      if (!data) throw new Error(`Secret ${source.secretRef.name} does not exist`);
      for (const [k, v] of Object.entries(data)) env[prefix + k] = v;
    } else {
      throw new Error(`${container.name}: unsupported envFrom source`);
    }
  }
  for (const variable of container.env ?? []) {
    const from = variable.valueFrom;
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (from?.secretKeyRef)
      env[variable.name] = secretValue(from.secretKeyRef.name, from.secretKeyRef.key);
    else if (from?.configMapKeyRef) {
      const data = configMapData(manifests, from.configMapKeyRef.name);
      const value = data[from.configMapKeyRef.key];
      if (value === undefined) throw new Error(`ConfigMap has no key ${from.configMapKeyRef.key}`);
      env[variable.name] = value;
    } else throw new Error(`${container.name}: ${variable.name} has no value this test resolves`);
  }
  return env;
}

/** Which gateway service a container runs: the image's last path segment, without tag. */
export function imageService(image: string): string {
  return image
    .split('/')
    .pop()!
    .replace(/[:@].*$/, '');
}

/**
 * The gateway's Deployments and the service each runs (its image and configuration schema).
 * Edge's image runs twice, each with its own EDGE_SURFACES: `edge` serves the public and
 * operator APIs, `edge-dashboard` the dashboard (a process per bulkhead, docs/deployment.md).
 */
export const DEPLOYMENTS: Readonly<Record<string, GatewayService>> = {
  edge: 'edge',
  'edge-dashboard': 'edge',
  billing: 'billing',
  'inference-worker': 'inference-worker',
  dispatcher: 'dispatcher',
};

/** Edge's Deployments: the ones that run edge's image. */
export const EDGE_DEPLOYMENTS = Object.keys(DEPLOYMENTS).filter((d) => DEPLOYMENTS[d] === 'edge');

/**
 * Whether a manifest is the Job `baseName` of k8s/base: overlays name it per release
 * (`gateway-migrate-<tag>`; a Job's pod template is immutable).
 */
export const isReleaseJob = (manifest: Manifest, baseName: string): boolean =>
  manifest.kind === 'Job' &&
  (manifest.metadata.name === baseName || manifest.metadata.name.startsWith(`${baseName}-`));
