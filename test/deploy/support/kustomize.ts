import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/*
 * The subset of kustomize that k8s/ uses, so the tests can compose each overlay without the
 * kustomize binary: `resources` (files and directories with their own kustomization),
 * `components` (kind Component, applied after the resources), `configMapGenerator` (`envs`
 * files and `literals`; behavior create, merge or replace; the name gets a hash of the content
 * and every pod template's reference follows, so a changed setting rolls the pods), `patches`
 * by `path` (strategic merge, target found by kind and name; `$patch: delete` removes the
 * target) or inline with a `target` (JSON 6902 operations add, replace, remove), `namespace`,
 * `labels` (pairs, includeTemplates; never selectors) and `images`. Any other field of a
 * kustomization.yaml is refused, so a manifest cannot quietly rely on something this loader (and
 * therefore the tests) would ignore.
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
  'components',
  'configMapGenerator',
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

interface Generator {
  name: string;
  behavior?: 'create' | 'merge' | 'replace';
  envs?: string[];
  literals?: string[];
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  resources?: string[];
  components?: string[];
  configMapGenerator?: Generator[];
  patches?: { path?: string; target?: { kind: string; name: string }; patch?: string }[];
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

const GENERATOR_FIELDS = new Set(['name', 'behavior', 'envs', 'literals']);

function checkPatches(file: string, patches: Kustomization['patches']): void {
  for (const patch of patches ?? []) {
    const byPath = typeof patch.path === 'string' && !patch.target && patch.patch === undefined;
    const inline =
      patch.path === undefined &&
      typeof patch.patch === 'string' &&
      typeof patch.target?.kind === 'string' &&
      typeof patch.target.name === 'string' &&
      Object.keys(patch.target).length === 2;
    if (!byPath && !inline) {
      throw new Error(
        `${file}: patches are by path (strategic merge) or inline JSON 6902 with a target kind and name`,
      );
    }
  }
}

function readKustomization(dir: string, kind = 'Kustomization'): Kustomization {
  const file = path.join(dir, 'kustomization.yaml');
  const [document, ...more] = readYamlDocuments(file);
  if (!isObject(document) || more.length > 0) throw new Error(`${file}: one mapping expected`);
  for (const key of Object.keys(document)) {
    if (!SUPPORTED_FIELDS.has(key)) throw new Error(`${file}: unsupported field "${key}"`);
  }
  if (document.kind !== kind) throw new Error(`${file}: kind must be ${kind}`);
  checkPatches(file, document.patches as Kustomization['patches']);
  for (const label of (document.labels ?? []) as NonNullable<Kustomization['labels']>) {
    if (label.includeSelectors) throw new Error(`${file}: labels must not include selectors`);
  }
  for (const generator of (document.configMapGenerator ?? []) as Generator[]) {
    for (const key of Object.keys(generator)) {
      if (!GENERATOR_FIELDS.has(key))
        throw new Error(`${file}: unsupported generator field ${key}`);
    }
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

/** Marks a generated ConfigMap whose name gets its content hash (kustomize's own annotation). */
const NEEDS_HASH = 'internal.config.kubernetes.io/needsHashAnnotation';

/** `KEY=VALUE` lines of an env file or `literals`; `#` comments and blank lines skipped. */
function keyValues(lines: string[], source: string): Record<string, string> {
  const data: Record<string, string> = {};
  for (const line of lines.map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    if (at <= 0) throw new Error(`${source}: "${line}" is not KEY=VALUE`);
    data[line.slice(0, at)] = line.slice(at + 1).replace(/^(['"])(.*)\1$/, '$2');
  }
  return data;
}

function generate(dir: string, generators: Generator[], manifests: Manifest[]): void {
  for (const generator of generators) {
    const data: Record<string, string> = {};
    for (const envs of generator.envs ?? []) {
      const file = path.resolve(dir, envs);
      Object.assign(data, keyValues(readFileSync(file, 'utf8').split('\n'), file));
    }
    Object.assign(data, keyValues(generator.literals ?? [], `${dir} ${generator.name}`));
    const existing = manifests.find(
      (m) => m.kind === 'ConfigMap' && m.metadata.name === generator.name,
    );
    const behavior = generator.behavior ?? 'create';
    if ((behavior === 'create') !== (existing === undefined)) {
      throw new Error(`${dir}: configMapGenerator ${generator.name}: ${behavior} vs what exists`);
    }
    if (existing) {
      existing.data = behavior === 'merge' ? { ...(existing.data as Json), ...data } : data;
      continue;
    }
    manifests.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: generator.name, annotations: { [NEEDS_HASH]: 'true' } },
      data,
    });
  }
}

/** Go's json.Marshal of the same value (sorted keys, <>& escaped), as kustomize hashes it. */
function goJson(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    isObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sorted(v[k])]),
        )
      : v;
  return JSON.stringify(sorted(value)).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** kustomize's name suffix for a ConfigMap: its content's SHA-256, 10 characters, re-lettered. */
export function configMapHash(name: string, data: Record<string, string>): string {
  const hex = createHash('sha256')
    .update(goJson({ kind: 'ConfigMap', name, data }))
    .digest('hex');
  const letters: Record<string, string> = { '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' };
  return [...hex.slice(0, 10)].map((c) => letters[c] ?? c).join('');
}

/** Every place a pod template names a ConfigMap. */
function configMapRefs(spec: Json): Json[] {
  const refs: Json[] = [];
  for (const container of [
    ...((spec.initContainers ?? []) as Json[]),
    ...((spec.containers ?? []) as Json[]),
  ]) {
    for (const source of (container.envFrom ?? []) as Json[]) {
      if (isObject(source.configMapRef)) refs.push(source.configMapRef);
    }
    for (const variable of (container.env ?? []) as Json[]) {
      const from = variable.valueFrom as Json | undefined;
      if (isObject(from?.configMapKeyRef)) refs.push(from.configMapKeyRef);
    }
  }
  for (const volume of (spec.volumes ?? []) as Json[]) {
    if (isObject(volume.configMap)) refs.push(volume.configMap);
  }
  return refs;
}

/** Names generated ConfigMaps after their content and points every reference at the new name. */
function hashGeneratedNames(manifests: Manifest[]): void {
  const renamed = new Map<string, string>();
  for (const m of manifests.filter((x) => x.kind === 'ConfigMap')) {
    const annotations = m.metadata.annotations as Record<string, string> | undefined;
    if (annotations?.[NEEDS_HASH] !== 'true') continue;
    delete annotations[NEEDS_HASH];
    if (Object.keys(annotations).length === 0) delete m.metadata.annotations;
    const name = `${m.metadata.name}-${configMapHash(m.metadata.name, (m.data ?? {}) as Record<string, string>)}`;
    renamed.set(m.metadata.name, name);
    m.metadata.name = name;
  }
  for (const spec of manifests.flatMap(podSpecs)) {
    for (const ref of configMapRefs(spec)) {
      const name = renamed.get(String(ref.name));
      if (name) ref.name = name;
    }
  }
}

/** One JSON 6902 operation on a plain value (paths of mapping keys and list indexes). */
function applyOperation(target: Json, op: { op: string; path: string; value?: unknown }): void {
  const keys = op.path
    .split('/')
    .slice(1)
    .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = keys.pop()!;
  let parent: unknown = target;
  for (const key of keys) parent = (parent as Json)[key];
  if (!isObject(parent) && !Array.isArray(parent)) throw new Error(`no ${op.path}`);
  if (op.op === 'remove') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else if (op.op === 'add' || op.op === 'replace') {
    if (op.op === 'replace' && !(last in parent)) throw new Error(`no ${op.path} to replace`);
    if (Array.isArray(parent) && op.op === 'add') {
      parent.splice(last === '-' ? parent.length : Number(last), 0, op.value);
    } else (parent as Json)[last] = op.value;
  } else throw new Error(`JSON 6902 operation ${op.op} is not supported`);
}

function applyPatches(dir: string, patches: Kustomization['patches'], manifests: Manifest[]): void {
  for (const entry of patches ?? []) {
    if (entry.target) {
      const { kind, name } = entry.target;
      const target = manifests.find((m) => m.kind === kind && m.metadata.name === name);
      if (!target) throw new Error(`${dir}: patch target ${kind}/${name} does not exist`);
      for (const op of parse(entry.patch!) as { op: string; path: string; value?: unknown }[]) {
        applyOperation(target as unknown as Json, op);
      }
      continue;
    }
    const file = path.resolve(dir, entry.path!);
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
}

function loadResources(dir: string, resources: string[]): Manifest[] {
  const manifests: Manifest[] = [];
  for (const resource of resources) {
    const location = path.resolve(dir, resource);
    if (!existsSync(location)) throw new Error(`${dir}: resource ${resource} does not exist`);
    if (statSync(location).isDirectory()) {
      manifests.push(...build(location, 'Kustomization'));
    } else {
      manifests.push(...readYamlDocuments(location).map((doc) => asManifest(doc, location)));
    }
  }
  return structuredClone(manifests);
}

/** Everything a kustomization or component does to the objects it starts from. */
function transform(dir: string, kustomization: Kustomization, manifests: Manifest[]): Manifest[] {
  manifests.push(...loadResources(dir, kustomization.resources ?? []));
  for (const component of kustomization.components ?? []) {
    const componentDir = path.resolve(dir, component);
    manifests = transform(componentDir, readKustomization(componentDir, 'Component'), manifests);
  }
  generate(dir, kustomization.configMapGenerator ?? [], manifests);
  applyPatches(dir, kustomization.patches, manifests);

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

function build(dir: string, kind: string): Manifest[] {
  return transform(dir, readKustomization(dir, kind), []);
}

/** Builds a kustomization directory into its final list of objects. */
export function buildKustomization(dir: string): Manifest[] {
  const manifests = build(dir, 'Kustomization');
  hashGeneratedNames(manifests);
  return manifests;
}
