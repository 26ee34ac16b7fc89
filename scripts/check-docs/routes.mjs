// HTTP routes: the route strings the code and the deployment YAML declare, and the routes a span
// of a document names.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { parseAllDocuments, visit as visitYaml } from 'yaml';
import { ROOT, read, walk } from './repo.mjs';

const CODE_EXT = /\.(?:ts|tsx|mts|mjs|js|cjs)$/;
const METHODS = 'GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS';
const PARAM = ':'; // a path parameter (`:id`, `*model`, `{*route}` in code; `{id}` in docs)
const DYNAMIC = '\uE000'; // a template's `${...}` as a whole segment

const scriptKind = (file) =>
  file.endsWith('.tsx')
    ? ts.ScriptKind.TSX
    : /\.(?:ts|mts)$/.test(file)
      ? ts.ScriptKind.TS
      : ts.ScriptKind.JS;

/**
 * The string literals of a JavaScript or TypeScript file, parsed by the TypeScript compiler:
 * `{ line, at, value }` for each string literal and template literal (a template's `${...}`
 * becomes DYNAMIC), `at` the offset of its opening quote. Comments and regular expressions are
 * not string literals.
 */
export function stringLiterals(file, source) {
  const sourceFile = ts.createSourceFile(
    file,
    source,
    { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone },
    false,
    scriptKind(file),
  );
  const out = [];
  const text = (node) => node.text ?? node.rawText ?? '';
  const push = (node, value) => {
    const at = node.getStart(sourceFile);
    out.push({ at, line: sourceFile.getLineAndCharacterOfPosition(at).line, value });
  };
  const visit = (node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      push(node, text(node));
    } else if (ts.isTemplateExpression(node)) {
      push(
        node,
        text(node.head) + node.templateSpans.map((s) => DYNAMIC + text(s.literal)).join(''),
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return out.sort((a, b) => a.at - b.at);
}

/** `/a/:id/{*rest}` as segments (parameters PARAM, `${...}` DYNAMIC); undefined if no route. */
function declaredSegments(literal) {
  let path = literal;
  // A template whose dynamic part is inside a segment (`/internal/v1${path}`): the literal
  // part before it is the declared piece.
  const cut = path.search(/[^/]\uE000|\uE000[^/]/);
  if (cut >= 0) path = path.slice(0, cut + 1).replace(/\uE000$/, '');
  if (!/^\/(?:[A-Za-z0-9_\-.:{}*\uE000~]+\/?)*$/.test(path) || path.startsWith('//')) return;
  return path
    .split('/')
    .filter(Boolean)
    .map((s) => (s === DYNAMIC ? DYNAMIC : /^(?::|\*|\{)/.test(s) ? PARAM : s));
}

/** The `/...` words of the scalars (keys and values) of a YAML file; comments are not read. */
function yamlPaths(source) {
  const out = [];
  const scan = (value) => {
    for (const [, path] of value.matchAll(/(?:^|[:\s-])\s*['"]?(\/[A-Za-z0-9_\-./:{}*]+)/gm)) {
      out.push(path);
    }
  };
  for (const document of parseAllDocuments(source)) {
    if (document.errors?.length) {
      scan(source); // not plain YAML: every `/...` of the text
      return out;
    }
    visitYaml(document, {
      Scalar(_, node) {
        if (typeof node.value === 'string') scan(node.value);
      },
    });
  }
  return out;
}

/**
 * The declared route pieces: `{ segments, values }`, where `values`, for a piece with a DYNAMIC
 * segment, are the words that segment may be: the string literals of the template's line and
 * the three above (`for (const action of ['suspend', 'unsuspend'])` then
 * `/accounts/:id/${action}`). Also the versioned mounts (`/v1`, `/admin/v1`, `/internal/v1`) a
 * document may give a path relative to, as service READMEs do for their own API.
 */
export function routeKnowledge() {
  const pieces = new Map();
  let files = 0;
  const add = (literal, literals = []) => {
    const segments = declaredSegments(literal);
    if (!segments || segments.every((s) => s === PARAM || s === DYNAMIC)) return;
    const key = segments.join('/');
    const piece = pieces.get(key) ?? { segments, values: new Set() };
    if (segments.includes(DYNAMIC)) for (const value of literals) piece.values.add(value);
    pieces.set(key, piece);
  };
  for (const top of ['services', 'packages', 'apps', 'infra', 'test', 'scripts']) {
    const sources = walk(join(ROOT, top), (name) => CODE_EXT.test(name) && !/\.test\./.test(name));
    for (const file of sources) {
      files++;
      const source = read(file);
      // Only a file with a quote followed by `/` can hold a route string: skip parsing the rest.
      if (!/['"`]\//.test(source)) continue;
      const literals = stringLiterals(file, source);
      for (const { at, line, value } of literals) {
        if (!value.startsWith('/')) continue;
        if (!value.includes(DYNAMIC)) {
          add(value);
          continue;
        }
        const near = literals.filter((x) => x.at <= at && line - x.line <= 3);
        add(
          value,
          near.map((x) => x.value),
        );
      }
    }
  }
  // Probe, scrape and ingress paths: `path: /healthz`, `metrics_path: /metrics/per-object`.
  const yamlFiles = [
    ...walk(join(ROOT, 'infra'), (name) => /\.ya?ml$/.test(name)),
    ...walk(join(ROOT, 'k8s'), (name) => /\.ya?ml$/.test(name)),
    join(ROOT, 'docker-compose.yml'),
  ].filter((f) => existsSync(f));
  for (const file of yamlFiles) {
    files++;
    for (const value of yamlPaths(read(file))) add(value);
  }
  const mounts = new Map();
  for (const { segments } of pieces.values()) {
    segments.forEach((segment, index) => {
      const literalBefore = segments.slice(0, index).every((s) => s !== PARAM && s !== DYNAMIC);
      if (/^v\d+$/.test(segment) && literalBefore) {
        mounts.set(segments.slice(0, index + 1).join('/'), segments.slice(0, index + 1));
      }
    });
  }
  return { pieces: [...pieces.values()], mounts: [...mounts.values()], files };
}

/**
 * Whether `path` (segments) is a sequence of declared pieces. `prefix`: the path may end inside
 * a piece (`/admin/v1/*`); `suffix`: it may begin inside one (`…/suspend`).
 */
function routeExists(path, pieces, { prefix = false, suffix = false } = {}) {
  const fits = ({ segments, values }, from, at) => {
    // How many segments of a piece (from index `from`) match `path` at `at`; -1 on a mismatch.
    // A parameter matches a parameter only: `/accounts/:id` is no proof of `/accounts/bogus`.
    let k = 0;
    for (; from + k < segments.length && at + k < path.length; k++) {
      const declared = segments[from + k];
      const documented = path[at + k];
      if (declared === DYNAMIC && (documented === PARAM || values.has(documented))) continue;
      if (declared !== documented) return -1;
    }
    return k;
  };
  const reached = new Set();
  const step = (at) => {
    if (at === path.length) return true;
    if (reached.has(at)) return false;
    reached.add(at);
    for (const piece of pieces) {
      const k = fits(piece, 0, at);
      if (k < 0) continue;
      if (k === piece.segments.length && step(at + k)) return true;
      if (k < piece.segments.length && prefix) return true; // the path ends inside this piece
    }
    return false;
  };
  if (path.length === 0) return true;
  if (step(0)) return true;
  if (!suffix) return false;
  for (const piece of pieces) {
    for (let from = 1; from < piece.segments.length; from++) {
      const k = fits(piece, from, 0);
      if (k < 0) continue;
      if (k === path.length) return true;
      if (from + k === piece.segments.length && step(k)) return true;
    }
  }
  return false;
}

// Absolute paths that are the machine's, not routes.
const MACHINE_DIRS = new Set([
  'app',
  'bin',
  'data',
  'dev',
  'etc',
  'home',
  'lib',
  'mnt',
  'opt',
  'proc',
  'root',
  'run',
  'sbin',
  'srv',
  'sys',
  'tmp',
  'usr',
  'var',
]);

/** The documented routes of a span (several with `[/a|/b]`), or [] when it names none. */
function documentedRoutes(span) {
  const match = new RegExp(
    String.raw`^(?:(?:${METHODS})(?:\/(?:${METHODS}))*\s+)?((?:…|\.\.\.)?\/\S*)`,
  ).exec(span);
  if (!match) return [];
  const withMethod = match[0] !== match[1];
  let path = match[1].replace(/[?#].*$/, '');
  const first = path.replace(/^(?:…|\.\.\.)/, '').split('/')[1] ?? '';
  const suffix = /^(?:…|\.\.\.)/.test(path);
  // Without a method, `/` alone, a machine path or the tail of some URL (`…/hooks?job=<ref>`, a
  // client's webhook URL) is no route of ours.
  if (!withMethod && (path === '/' || MACHINE_DIRS.has(first) || suffix)) return [];
  path = path.replace(/^(?:…|\.\.\.)/, '');
  const variants = [];
  const optional = /\[([^\]]*)\]/.exec(path);
  if (optional) {
    const base = path.slice(0, optional.index);
    variants.push(base);
    for (const alternative of optional[1].split('|')) variants.push(base + alternative);
  } else variants.push(path);
  return variants.map((variant) => {
    const prefix = /(?:\/\*|\/\.\.\.|…|\.\.\.)$/.test(variant);
    const segments = variant
      .replace(/(?:\/\*|\/\.\.\.|…|\.\.\.)$/, '')
      .split('/')
      .filter(Boolean)
      .map((s) => (/^(?:\{.*\}|:.+|<.*>|\*.*)$/.test(s) ? PARAM : s));
    return { name: (suffix ? '…' : '') + variant, segments, prefix, suffix };
  });
}

/**
 * The routes a span names, each `{ name, found }`: found as written or under a versioned mount
 * (`/admin/usage` in billing's internal API table is `/internal/v1/admin/usage`).
 */
export function routeMentions(text, routes) {
  return documentedRoutes(text).map((route) => ({
    name: route.name,
    found: [[], ...routes.mounts].some((mount) =>
      routeExists([...mount, ...route.segments], routes.pieces, route),
    ),
  }));
}
