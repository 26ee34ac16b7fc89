#!/usr/bin/env node
/**
 * Docs check: fails when a Markdown file names a SQL function, an HTTP route,
 * a repository file or directory, or a workspace package that does not exist.
 *
 *   node scripts/check-docs.mjs               every Markdown file (pnpm check:docs, pnpm test)
 *   node scripts/check-docs.mjs a.md b.md     only these
 *   node scripts/check-docs.mjs --list        also print every mention checked
 *
 * Prints `file:line: kind 'name' not found` for each problem and exits 1, or one summary line
 * and exits 0. No dependency beyond Node's own modules.
 *
 * What is read: every *.md of the repository except under node_modules, dist, coverage, .git,
 * generated and the dot directories but .ci (.data, .tmp, .bench, .artifacts, .faults: run
 * output, ignored by git). Only inline code spans (`...`) are checked; fenced code blocks are
 * examples and commands and are skipped.
 *
 * Kinds:
 * - sql-function: a span `name(...)` with a snake_case name (PostgreSQL's and PromQL's own
 *   functions such as `pg_*`, `date_trunc`, `histogram_quantile` excepted), or a span that is
 *   exactly a snake_case name sharing its first two words with a function the migrations create
 *   or drop (`billing_admit_v1`, `ledger_settle_hold`), unless the name is some other identifier
 *   of the schema (a table, column, trigger, constraint...). The name must be created by a
 *   migration (a .sql file in a migrations directory of a service, applied in path order) and
 *   not dropped or renamed away by a later one (DROP FUNCTION, ALTER FUNCTION ... RENAME TO).
 *   Other snake_case spans (columns, metrics, error codes, settings) are not SQL functions.
 * - file: each word of a span that looks like a path: it contains a `/` and ends in a known
 *   extension, or starts with a top-level directory of the repository (services/, docs/...),
 *   with src/, ./ or ../, or with a directory next to the Markdown file or at its package's root
 *   (prisma/, bench/, migrations/). It must exist relative to the repository root, the Markdown
 *   file's directory, its package root, the src/ of either, or a directory named in a code span
 *   of the section's heading ("What the tests check (`test/deploy/`)"). In a document outside
 *   every package (the root README, docs/), `src/...` and `dist/...` mean "a package's": they
 *   must exist in some workspace package. Skipped: globs and placeholders (`*`, `<...>`,
 *   `{...}`, `[...]`, `…`, `NNN_`), URLs and anything else with `:`, `$`, `=`, `|` or `#` (but
 *   `HEAD:path` is the path), and absolute paths (routes or machine paths). Build outputs are
 *   checked through their sources, since they exist only after a build: `<pkg>/dist/x/y.js`
 *   needs `<pkg>/src/x/y.ts` (or .tsx/.mts/.js/.mjs), `<pkg>/dist` needs `<pkg>`. Paths under
 *   node_modules/ (installed, not ours), src/generated/ (prisma generate) and dot directories
 *   (.data/, .bench/, .artifacts/...: written by runs) are not checked and not counted.
 * - route: a span `METHOD /path ...` (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, or several
 *   joined by `/`), or a span whose first word is an absolute path not under a machine directory
 *   (/tmp, /usr, /etc, /proc, /app, ...). The query (`?...`), fragment (`#...`) and anything
 *   after the path (a body sketch) are dropped; `{id}`, `:id`, `<id>`, `*id` and `{*id}` are
 *   parameters; a trailing `/*`, `/...` or `…` means "a route under this prefix"; with a method,
 *   a leading `…` means "a route ending so" (without one, `…/x` is the tail of some URL, maybe a
 *   client's, and is not checked); `[/a|/b]` is the path alone, then with each alternative.
 *   Routes are mounted in pieces (app.use('/admin/v1', router), router.get('/accounts/:id')), so
 *   a path exists when its segments are a sequence of declared route strings: string literals
 *   beginning with `/` in the code (services, packages including the stand-ins, apps, infra,
 *   scripts, test helpers; comments and *.test.* files excluded, since a test may assert that a
 *   removed route answers 404), plus `/...` values in the YAML of infra/, k8s/ and
 *   docker-compose.yml (probe, scrape and ingress paths). A path may also be relative to a
 *   versioned mount the code declares (`/v1`, `/admin/v1`, `/internal/v1`), as a service README
 *   writes its own API (`POST /admissions`). A parameter matches a parameter only; a template's
 *   `${x}` segment also matches a word quoted on its line or the three above (`for (const action
 *   of ['suspend', 'unsuspend'])`); a declared string made of parameters only (`/:id`,
 *   `/{*route}`) is never a piece. The HTTP method is not checked (routes declare it in too
 *   many ways: router.get, route tables, the OpenAPI document). This finds a route that is gone
 *   from the code or misspelt; it cannot prove that the prefix a document implies is the one
 *   the route is mounted under (any sequence of declared pieces is accepted).
 * - package: `@gateway/<name>` must be a workspace package (pnpm-workspace.yaml's globs).
 *
 * Intentional mentions of things that no longer exist (a decisions log entry that says "`x` was
 * replaced by `y`"): put `<!-- docs-check: historical -->` on the line of the span, or wrap a
 * whole passage in `<!-- docs-check: historical-start -->` ... `<!-- docs-check: historical-end -->`.
 * Spans there are not checked. Use it only for text about the past; fix everything else.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// ---------------------------------------------------------------------------------------------
// Walking the repository

const SKIP_DIRS = new Set(['node_modules', 'dist', 'coverage', '.git', 'generated']);

/** Files under `dir` (absolute) whose name passes `keep`; skips build, install and run output. */
function walk(dir, keep, out = []) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      // Dot directories are run output (.data, .tmp, .bench...) except the CI entry point.
      if (SKIP_DIRS.has(entry.name) || (entry.name.startsWith('.') && entry.name !== '.ci')) {
        continue;
      }
      walk(path, keep, out);
    } else if (entry.isFile() && keep(entry.name, path)) {
      out.push(path);
    }
  }
  return out;
}

const rel = (path) => relative(ROOT, path).split(sep).join('/');
const read = (path) => readFileSync(path, 'utf8');
const isDir = (path) => existsSync(path) && statSync(path).isDirectory();

// ---------------------------------------------------------------------------------------------
// SQL functions: what the migrations create, drop and rename, in the order they run

const SQL_NAME = String.raw`(?:"?[A-Za-z_][A-Za-z0-9_]*"?\.)?"?([A-Za-z_][A-Za-z0-9_]*)"?`;

function stripSqlComments(sql) {
  return sql.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/--[^\n]*/g, ' ');
}

function sqlKnowledge() {
  const migrations = [];
  for (const service of readdirSync(join(ROOT, 'services'))) {
    const files = walk(join(ROOT, 'services', service), (name, path) => {
      return name.endsWith('.sql') && rel(path).split('/').includes('migrations');
    });
    migrations.push(...files.sort());
  }
  const live = new Set();
  const dropped = new Map(); // name -> the migration that dropped or renamed it
  const identifiers = new Set(); // every other identifier of the schema
  const events = new RegExp(
    String.raw`\b(?:CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+${SQL_NAME}` +
      String.raw`|DROP\s+FUNCTION\s+(?:IF\s+EXISTS\s+)?([^;]+)` +
      String.raw`|ALTER\s+FUNCTION\s+${SQL_NAME}[^;]*?\bRENAME\s+TO\s+${SQL_NAME})`,
    'gi',
  );
  for (const file of migrations) {
    const sql = stripSqlComments(read(file));
    for (const word of sql.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) identifiers.add(word);
    for (const [, created, dropList, renamedFrom, renamedTo] of sql.matchAll(events)) {
      if (created) {
        live.add(created);
        dropped.delete(created);
      } else if (dropList) {
        // DROP FUNCTION a(int), b(text) CASCADE: the names before each argument list.
        const names = dropList.replace(/\([^)]*\)/g, '').split(',');
        for (const raw of names) {
          const name = raw.trim().split(/\s+/)[0].split('.').pop().replaceAll('"', '');
          if (!name) continue;
          live.delete(name);
          dropped.set(name, rel(file));
        }
      } else if (renamedFrom) {
        live.delete(renamedFrom);
        dropped.set(renamedFrom, rel(file));
        live.add(renamedTo);
      }
    }
  }
  const known = new Set([...live, ...dropped.keys()]);
  for (const name of known) identifiers.delete(name);
  const stems = new Set([...known].map(stem).filter(Boolean));
  return { live, dropped, identifiers, stems, migrations: migrations.length };
}

/** The first two words of a snake_case name (`billing_admit` of `billing_admit_v2`). */
function stem(name) {
  const words = name.split('_');
  return words.length >= 2 ? `${words[0]}_${words[1]}` : undefined;
}

// PostgreSQL's own snake_case functions a document may call; `pg_*` are all PostgreSQL's.
const SQL_BUILTINS = new Set([
  'array_agg',
  'array_length',
  'array_position',
  'char_length',
  'clock_timestamp',
  'current_setting',
  'date_part',
  'date_trunc',
  'gen_random_uuid',
  'json_agg',
  'json_build_object',
  'jsonb_agg',
  'jsonb_build_object',
  'octet_length',
  'set_config',
  'statement_timestamp',
  'string_agg',
  'to_char',
  'to_timestamp',
  'transaction_timestamp',
]);
// PromQL's, for the alerting and dashboard notes.
const PROMQL_FUNCTIONS = new Set([
  'absent_over_time',
  'count_values',
  'histogram_quantile',
  'label_join',
  'label_replace',
  'predict_linear',
  'sort_desc',
]);
const isBuiltin = (name) =>
  name.startsWith('pg_') ||
  name.endsWith('_over_time') ||
  SQL_BUILTINS.has(name) ||
  PROMQL_FUNCTIONS.has(name);

// ---------------------------------------------------------------------------------------------
// Routes: the string literals of the code that begin with `/`

const CODE_EXT = /\.(?:ts|tsx|mts|mjs|js|cjs)$/;
const KEYWORDS_BEFORE_REGEX = new Set([
  'return',
  'typeof',
  'case',
  'in',
  'of',
  'void',
  'delete',
  'throw',
  'new',
  'else',
  'do',
  'yield',
  'await',
]);

/**
 * The string literals of JavaScript or TypeScript source (`{ at, value }`, `at` the offset of
 * the opening quote), comments and regular expressions skipped. A template literal's `${...}`
 * becomes DYNAMIC. A quote string ends at a line end, so a stray apostrophe in JSX text spoils
 * one line at most.
 */
function stringLiterals(source) {
  const out = [];
  let i = 0;
  let last = ''; // the last significant character or word of code, to tell `/` from a regex
  const n = source.length;

  function quoted(quote) {
    let value = '';
    i++;
    while (i < n && source[i] !== quote && source[i] !== '\n') {
      if (source[i] === '\\') {
        value += source[i + 1] ?? '';
        i += 2;
      } else value += source[i++];
    }
    i++;
    return value;
  }

  function template() {
    let value = '';
    i++;
    while (i < n && source[i] !== '`') {
      if (source[i] === '\\') {
        value += source[i + 1] ?? '';
        i += 2;
      } else if (source[i] === '$' && source[i + 1] === '{') {
        i += 2;
        code('}');
        i++;
        value += DYNAMIC;
      } else value += source[i++];
    }
    i++;
    return value;
  }

  function regex() {
    let inClass = false;
    i++;
    while (i < n && source[i] !== '\n') {
      const c = source[i];
      if (c === '\\') i += 2;
      else if (c === '/' && !inClass) break;
      else {
        if (c === '[') inClass = true;
        if (c === ']') inClass = false;
        i++;
      }
    }
    i++;
    while (i < n && /[a-z]/i.test(source[i])) i++;
  }

  // Code until the `}` closing a template's `${` (or the end), recording string literals.
  function code(until) {
    let depth = 0;
    while (i < n) {
      const c = source[i];
      if (until && c === '}' && depth === 0) return;
      if (c === '{') depth++;
      if (c === '}') depth--;
      if (c === '/' && source[i + 1] === '/') {
        while (i < n && source[i] !== '\n') i++;
      } else if (c === '/' && source[i + 1] === '*') {
        const end = source.indexOf('*/', i + 2);
        i = end < 0 ? n : end + 2;
      } else if (c === "'" || c === '"') {
        out.push({ at: i, value: quoted(c) });
        last = 'string';
      } else if (c === '`') {
        out.push({ at: i, value: template() });
        last = 'string';
      } else if (c === '/') {
        if (
          last === '' ||
          /^[(,=:[!&|?{};+\-*%<>~^]$/.test(last) ||
          KEYWORDS_BEFORE_REGEX.has(last)
        ) {
          regex();
          last = 'regex';
        } else {
          i++;
          last = '/';
        }
      } else if (/[A-Za-z_$]/.test(c)) {
        const start = i;
        while (i < n && /[\w$]/.test(source[i])) i++;
        last = source.slice(start, i);
      } else {
        if (!/\s/.test(c)) last = c;
        i++;
      }
    }
  }

  code(undefined);
  return out;
}

const METHODS = 'GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS';
const PARAM = ':'; // a path parameter (`:id`, `*model`, `{*route}` in code; `{id}` in docs)
const DYNAMIC = '\uE000'; // a template's `${...}` as a whole segment

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

function routeKnowledge() {
  // joined segments -> { segments, values }: `values`, for a piece with a DYNAMIC segment, are
  // the words that segment may be: the string literals of the lines just above and on the
  // template's (`for (const action of ['suspend', 'unsuspend'])` then `/accounts/:id/${action}`).
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
    for (const file of walk(
      join(ROOT, top),
      (name) => CODE_EXT.test(name) && !/\.test\./.test(name),
    )) {
      files++;
      const source = read(file);
      const literals = stringLiterals(source);
      const lineOf = (at) => source.slice(0, at).split('\n').length;
      for (const { at, value } of literals) {
        if (!value.startsWith('/')) continue;
        if (!value.includes(DYNAMIC)) {
          add(value);
          continue;
        }
        const line = lineOf(at);
        const near = literals.filter((x) => x.at <= at && line - lineOf(x.at) <= 3);
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
    for (const [, value] of read(file).matchAll(
      /(?:^|[:\s-])\s*['"]?(\/[A-Za-z0-9_\-./:{}*]+)/gm,
    )) {
      add(value);
    }
  }
  // Versioned mounts (`/v1`, `/admin/v1`, `/internal/v1`): a document may give a path relative
  // to one, as service READMEs do for their own API.
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

// ---------------------------------------------------------------------------------------------
// Files

const FILE_EXT =
  /\.(?:ts|tsx|mts|mjs|js|cjs|sql|ya?ml|json|md|sh|prisma|toml|html|css|conf|txt|env|Dockerfile)$/;
const TOP_DIRS = new Set(
  readdirSync(ROOT, { withFileTypes: true })
    .filter(
      (e) =>
        e.isDirectory() && !SKIP_DIRS.has(e.name) && (!e.name.startsWith('.') || e.name === '.ci'),
    )
    .map((e) => e.name),
);

/** The nearest directory at or above `dir` with a package.json, below the root; else the root. */
function packageRoot(dir) {
  for (let d = dir; d.startsWith(ROOT) && d !== ROOT; d = dirname(d)) {
    if (existsSync(join(d, 'package.json'))) return d;
  }
  return ROOT;
}

/**
 * Where a path of `markdown` may be relative to. A document outside every package (the root
 * README, docs/) that says `src/main.ts` or `dist/main.js` means "a package's": those resolve
 * against every workspace package.
 */
function fileBases(markdown, packageDirs, heading) {
  const dir = dirname(markdown);
  const pkg = packageRoot(dir);
  const bases = [ROOT, dir, join(dir, 'src'), pkg, join(pkg, 'src')];
  for (const span of heading) {
    for (const base of [ROOT, dir, pkg]) if (isDir(join(base, span))) bases.push(join(base, span));
  }
  return {
    own: [...new Set(bases)],
    packages: pkg === ROOT ? [...new Set([...bases, ...packageDirs])] : [...new Set(bases)],
  };
}

/** The words of a span that name repository paths. */
function documentedPaths(span, markdown) {
  const out = [];
  const dir = dirname(markdown);
  const pkg = packageRoot(dir);
  for (const raw of span.split(/\s+/)) {
    const word = raw
      .replace(/^[("'`]+/, '')
      .replace(/[)"'`,;]+$/, '')
      .replace(/^[\w.~^-]+:(?=[\w.-]+\/)(?!\/)/, ''); // `git show HEAD:services/...`
    if (!word.includes('/') || word.startsWith('/') || word.startsWith('@')) continue;
    // Globs, placeholders, URLs and other non-paths (`HEAD:path`, `a|b`, `$VAR/x`, `x=y/z`).
    if (/[*<>{}[\]…$:|=#]|\.\.\.|(?:^|\/)N{2,}_/.test(word)) continue;
    const head = word.split('/')[0];
    const looksLikePath =
      FILE_EXT.test(word) ||
      TOP_DIRS.has(head) ||
      ['src', '.', '..'].includes(head) ||
      (head !== '' && (isDir(join(dir, head)) || isDir(join(pkg, head))));
    if (looksLikePath) out.push(word);
  }
  return out;
}

const SOURCE_EXTS = ['.ts', '.tsx', '.mts', '.js', '.mjs'];

/**
 * Whether `word` exists from one of `bases`; undefined for paths no check can expect to find
 * (installed, generated or written by runs).
 */
function pathExists(word, bases) {
  const path = word.replace(/\/$/, '');
  const segments = path.split('/');
  // Installed, generated or written by runs: nothing in the repository to compare with.
  if (segments.includes('node_modules')) return undefined;
  if (segments.some((s, i) => s === 'generated' && segments[i - 1] === 'src')) return undefined;
  if (segments.some((s) => s.startsWith('.') && s !== '.' && s !== '..' && s !== '.ci')) {
    return undefined;
  }
  const distAt = segments.indexOf('dist');
  if (distAt >= 0) {
    // A build output: its package (dist alone) or its source must exist.
    const pkg = segments.slice(0, distAt).join('/');
    const rest = segments.slice(distAt + 1).join('/');
    if (!rest) return bases.some((base) => isDir(join(base, pkg)));
    const source = rest.replace(/\.d\.ts$|\.(?:js|mjs|cjs)$/, '');
    return bases.some(
      (base) =>
        SOURCE_EXTS.some((ext) => existsSync(join(base, pkg, 'src', source + ext))) ||
        isDir(join(base, pkg, 'src', source)),
    );
  }
  return bases.some((base) => existsSync(join(base, path)));
}

// ---------------------------------------------------------------------------------------------
// Packages

/** Workspace package name -> directory, from pnpm-workspace.yaml's globs. */
function workspacePackages() {
  const names = new Map();
  const globs = read(join(ROOT, 'pnpm-workspace.yaml')).matchAll(/^\s*-\s*['"]?([^'"\s#]+)/gm);
  for (const [, glob] of globs) {
    const dirs = glob.endsWith('/*')
      ? readdirSync(join(ROOT, glob.slice(0, -2)), { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .map((e) => join(ROOT, glob.slice(0, -2), e.name))
      : [join(ROOT, glob)];
    for (const dir of dirs) {
      const manifest = join(dir, 'package.json');
      if (existsSync(manifest)) names.set(JSON.parse(read(manifest)).name, dir);
    }
  }
  return names;
}

// ---------------------------------------------------------------------------------------------
// Markdown

const HISTORICAL = '<!-- docs-check: historical -->';
const HISTORICAL_START = '<!-- docs-check: historical-start -->';
const HISTORICAL_END = '<!-- docs-check: historical-end -->';

/** Inline code spans of a Markdown text with their line numbers, outside fenced blocks. */
function codeSpans(text) {
  const lines = text.split('\n');
  const skipped = new Set(); // line indexes that are fenced code or marked historical
  let fence = null;
  let historical = false;
  lines.forEach((line, index) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      skipped.add(index);
      if (opener && opener[1][0] === fence[0] && opener[1].length >= fence.length) fence = null;
      return;
    }
    if (opener) {
      fence = opener[1];
      skipped.add(index);
      return;
    }
    if (line.includes(HISTORICAL_START)) historical = true;
    if (historical || line.includes(HISTORICAL)) skipped.add(index);
    if (line.includes(HISTORICAL_END)) historical = false;
  });
  // Blank the skipped lines, keeping the line count, and scan the rest as one text: a span may
  // wrap onto the next line but never crosses a blank line.
  const body = lines.map((line, index) => (skipped.has(index) ? '' : line)).join('\n');
  const spans = [];
  const lineStarts = [0];
  for (let k = 0; k < body.length; k++) if (body[k] === '\n') lineStarts.push(k + 1);
  const lineOf = (offset) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  // The headings above each line: a heading such as "What the tests check (`test/deploy/`)"
  // makes its section's relative paths relative to that directory too.
  const headingAt = [];
  let heading = '';
  lines.forEach((line, index) => {
    if (!skipped.has(index) && /^#{1,6}\s/.test(line)) heading = line;
    headingAt.push(heading);
  });
  const ticks = /`+/g;
  let m;
  while ((m = ticks.exec(body))) {
    if (m.index > 0 && body[m.index - 1] === '\\') continue;
    const close = body.indexOf(m[0], m.index + m[0].length);
    if (close < 0) continue;
    // The closing run must be exactly as long, and the span must stay in one paragraph.
    let end = close;
    while (end >= 0 && body[end + m[0].length] === '`')
      end = body.indexOf(m[0], end + m[0].length + 1);
    if (end < 0) continue;
    const content = body.slice(m.index + m[0].length, end);
    if (/\n\s*\n/.test(content)) continue;
    const line = lineOf(m.index);
    spans.push({
      line,
      heading: [...headingAt[line - 1].matchAll(/`([^`]+)`/g)].map((x) => x[1]),
      text: content
        .replace(/\s*\n\s*/g, ' ')
        .replace(/\\\|/g, '|')
        .trim(),
    });
    ticks.lastIndex = end + m[0].length;
  }
  return spans;
}

// ---------------------------------------------------------------------------------------------

function main() {
  const only = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const markdown =
    only.length > 0
      ? only.map((file) => resolve(file))
      : walk(ROOT, (name) => name.endsWith('.md')).sort();
  const sql = sqlKnowledge();
  const routes = routeKnowledge();
  const packages = workspacePackages();
  const problems = [];
  const checked = { 'sql-function': 0, route: 0, file: 0, package: 0 };
  const distinct = {
    'sql-function': new Set(),
    route: new Set(),
    file: new Set(),
    package: new Set(),
  };
  const list = process.argv.includes('--list');
  let current = '';
  const note = (kind, name) => {
    checked[kind]++;
    distinct[kind].add(name);
    if (list) console.log(`${current}: ${kind} '${name}'`);
  };

  for (const file of markdown) {
    for (const { line, text, heading } of codeSpans(read(file))) {
      const bases = fileBases(file, [...packages.values()], heading);
      const where = `${rel(file)}:${line}`;
      current = where;
      const problem = (kind, name, why = '') =>
        problems.push(`${where}: ${kind} '${name}' not found${why}`);

      // SQL functions
      const called = [...text.matchAll(/\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\s*\(/g)].map((x) => x[1]);
      const bare = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/.test(text) ? [text] : [];
      for (const name of called.filter((x) => !isBuiltin(x))) {
        note('sql-function', name);
        if (!sql.live.has(name)) {
          const by = sql.dropped.get(name);
          problem('sql-function', name, by ? ` (dropped by ${by})` : '');
        }
      }
      for (const name of bare) {
        if (!sql.live.has(name) && !sql.dropped.has(name) && !sql.stems.has(stem(name))) continue;
        if (!sql.live.has(name) && !sql.dropped.has(name) && sql.identifiers.has(name)) continue;
        note('sql-function', name);
        if (!sql.live.has(name)) {
          const by = sql.dropped.get(name);
          problem('sql-function', name, by ? ` (dropped by ${by})` : '');
        }
      }

      // Routes, as written or under a versioned mount (`/admin/usage` in billing's internal API
      // table is `/internal/v1/admin/usage`)
      for (const route of documentedRoutes(text)) {
        note('route', route.name);
        const found = [[], ...routes.mounts].some((mount) =>
          routeExists([...mount, ...route.segments], routes.pieces, route),
        );
        if (!found) problem('route', route.name);
      }

      // Files
      for (const path of documentedPaths(text, file)) {
        const packageRelative = /^(?:src|dist)\//.test(path);
        const exists = pathExists(path, packageRelative ? bases.packages : bases.own);
        if (exists === undefined) continue;
        note('file', path);
        if (!exists) problem('file', path);
      }

      // Workspace packages
      for (const [name] of text.matchAll(/@gateway\/[a-z0-9][a-z0-9-]*(?![\w*<-])/g)) {
        note('package', name);
        if (!packages.has(name)) problem('package', name);
      }
    }
  }

  if (problems.length > 0) {
    for (const p of problems) console.log(p);
    console.log(`check-docs: ${problems.length} problem(s) in ${markdown.length} Markdown files`);
    process.exit(1);
  }
  const counts = Object.keys(checked)
    .map((kind) => `${checked[kind]} ${kind} (${distinct[kind].size} distinct)`)
    .join(', ');
  console.log(
    `check-docs: ${markdown.length} Markdown files OK; mentions checked: ${counts}; ` +
      `against ${sql.migrations} migrations, ${routes.pieces.length} route strings from ${routes.files} files`,
  );
}

main();
