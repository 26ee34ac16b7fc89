import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

/*
 * The subset of kustomize that k8s/ uses, so the tests can compose each overlay without the
 * kustomize binary: `resources` (files and directories with their own kustomization),
 * `patches` by `path` (strategic merge, target found by kind and name; `$patch: delete`
 * removes the target), `namespace`, `labels` (pairs, includeTemplates; never selectors) and
 * `images`. Any other field of a kustomization.yaml is refused, so a manifest cannot quietly
 * rely on something this loader (and therefore the tests) would ignore.
 */

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> } & Record<
    string,
    unknown
  >;
  [field: string]: unknown;
}

type Json = Record<string, unknown>;

const SUPPORTED_FIELDS = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'resources',
  'patches',
  'labels',
  'images',
]);

/** Kinds without a namespace (the ones this project could plausibly use). */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'PriorityClass',
  'StorageClass',
  'IngressClass',
]);

/** Kinds whose pod template gets `labels` with includeTemplates, and images. */
const POD_TEMPLATE_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'ReplicaSet']);

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  resources?: string[];
  patches?: { path?: string; target?: unknown; patch?: string }[];
  labels?: {
    pairs: Record<string, string>;
    includeSelectors?: boolean;
    includeTemplates?: boolean;
  }[];
  images?: { name: string; newName?: string; newTag?: string; digest?: string }[];
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every YAML document of a file, as plain values; a syntax error throws. */
export function readYamlDocuments(file: string): unknown[] {
  const documents = parseAllDocuments(readFileSync(file, 'utf8'), { merge: true });
  if (!Array.isArray(documents)) return [];
  return documents
    .map((document) => {
      if (document.errors.length > 0) {
        throw new Error(`${file}: ${document.errors.map((e) => e.message).join('; ')}`);
      }
      return document.toJS() as unknown;
    })
    .filter((value) => value !== null && value !== undefined);
}

function readKustomization(dir: string): Kustomization {
  const file = path.join(dir, 'kustomization.yaml');
  const [document, ...more] = readYamlDocuments(file);
  if (!isObject(document) || more.length > 0) throw new Error(`${file}: one mapping expected`);
  for (const key of Object.keys(document)) {
    if (!SUPPORTED_FIELDS.has(key)) throw new Error(`${file}: unsupported field "${key}"`);
  }
  if (document.kind !== 'Kustomization') throw new Error(`${file}: kind must be Kustomization`);
  for (const patch of (document.patches ?? []) as Kustomization['patches'] & object) {
    if (typeof patch.path !== 'string' || patch.target !== undefined || patch.patch !== undefined) {
      throw new Error(`${file}: only patches by path (strategic merge, no target) are supported`);
    }
  }
  for (const label of (document.labels ?? []) as NonNullable<Kustomization['labels']>) {
    if (label.includeSelectors) throw new Error(`${file}: labels must not include selectors`);
  }
  return document as Kustomization;
}

function asManifest(value: unknown, source: string): Manifest {
  if (
    !isObject(value) ||
    typeof value.apiVersion !== 'string' ||
    typeof value.kind !== 'string' ||
    !isObject(value.metadata) ||
    typeof value.metadata.name !== 'string'
  ) {
    throw new Error(`${source}: not a Kubernetes object (apiVersion, kind, metadata.name)`);
  }
  return value as Manifest;
}

/** Lists of objects merge item by item on this key (containers, env, volumes, ports by name). */
const MERGE_KEY = 'name';

/**
 * Strategic merge as Kubernetes applies it to the fields this project patches: mappings merge
 * recursively, lists of named objects merge by name, any other list is replaced, null deletes.
 */
export function strategicMerge(target: unknown, patch: unknown): unknown {
  if (isObject(target) && isObject(patch)) {
    const merged: Json = { ...target };
    for (const [key, value] of Object.entries(patch)) {
      if (key === '$patch') continue;
      if (value === null) delete merged[key];
      else merged[key] = key in target ? strategicMerge(target[key], value) : value;
    }
    return merged;
  }
  if (Array.isArray(target) && Array.isArray(patch)) {
    const named = (list: unknown[]) =>
      list.every((item) => isObject(item) && typeof item[MERGE_KEY] === 'string');
    if (!named(target) || !named(patch)) return patch;
    const merged = target.map((item) => {
      const replacement = (patch as Json[]).find((p) => p[MERGE_KEY] === (item as Json)[MERGE_KEY]);
      return replacement ? strategicMerge(item, replacement) : item;
    });
    for (const item of patch as Json[]) {
      if (!target.some((t) => (t as Json)[MERGE_KEY] === item[MERGE_KEY])) merged.push(item);
    }
    return merged;
  }
  return patch;
}

function podSpecs(manifest: Manifest): Json[] {
  if (!POD_TEMPLATE_KINDS.has(manifest.kind)) return [];
  const template = (manifest.spec as Json | undefined)?.template as Json | undefined;
  return isObject(template?.spec) ? [template.spec] : [];
}

function setImage(image: string, rules: NonNullable<Kustomization['images']>): string {
  const match = /^(.*?)(?::([^:/@]+))?(?:@(sha256:[a-f0-9]+))?$/.exec(image)!;
  const [, name, tag, digest] = match;
  const rule = rules.find((r) => r.name === name);
  if (!rule) return image;
  const newName = rule.newName ?? name!;
  if (rule.digest) return `${newName}@${rule.digest}`;
  const newTag = rule.newTag ?? tag;
  return `${newName}${newTag ? `:${newTag}` : ''}${!rule.newTag && digest ? `@${digest}` : ''}`;
}

/** Builds a kustomization directory into its final list of objects. */
export function buildKustomization(dir: string): Manifest[] {
  const kustomization = readKustomization(dir);
  let manifests: Manifest[] = [];
  for (const resource of kustomization.resources ?? []) {
    const location = path.resolve(dir, resource);
    if (!existsSync(location)) throw new Error(`${dir}: resource ${resource} does not exist`);
    if (statSync(location).isDirectory()) {
      manifests.push(...buildKustomization(location));
    } else {
      manifests.push(...readYamlDocuments(location).map((doc) => asManifest(doc, location)));
    }
  }
  manifests = structuredClone(manifests);

  for (const { path: patchPath } of kustomization.patches ?? []) {
    const file = path.resolve(dir, patchPath!);
    for (const patch of readYamlDocuments(file)) {
      const { kind, metadata } = asManifest(patch, file);
      const targets = manifests.filter((m) => m.kind === kind && m.metadata.name === metadata.name);
      if (targets.length !== 1) {
        throw new Error(
          `${file}: patch ${kind}/${metadata.name} matches ${targets.length} objects`,
        );
      }
      const index = manifests.indexOf(targets[0]!);
      if ((patch as Json).$patch === 'delete') manifests.splice(index, 1);
      else manifests[index] = strategicMerge(targets[0], patch) as Manifest;
    }
  }

  for (const manifest of manifests) {
    if (kustomization.namespace && !CLUSTER_SCOPED.has(manifest.kind)) {
      manifest.metadata.namespace = kustomization.namespace;
    }
    for (const { pairs, includeTemplates } of kustomization.labels ?? []) {
      manifest.metadata.labels = { ...manifest.metadata.labels, ...pairs };
      const template = (manifest.spec as Json | undefined)?.template as Json | undefined;
      if (includeTemplates && POD_TEMPLATE_KINDS.has(manifest.kind) && template) {
        const metadata = (template.metadata ??= {}) as Json;
        metadata.labels = { ...(metadata.labels as Json | undefined), ...pairs };
      }
    }
    for (const spec of podSpecs(manifest)) {
      for (const list of ['initContainers', 'containers']) {
        for (const container of (spec[list] ?? []) as Json[]) {
          container.image = setImage(String(container.image), kustomization.images ?? []);
        }
      }
    }
  }
  return manifests;
}
