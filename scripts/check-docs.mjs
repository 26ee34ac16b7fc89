#!/usr/bin/env node
/**
 * Docs check: fails when a Markdown file names a SQL function, an HTTP route, a repository file
 * or directory, or a workspace package that does not exist, or has a broken local link.
 *
 *   node scripts/check-docs.mjs               every Markdown file (pnpm check:docs, pnpm test)
 *   node scripts/check-docs.mjs a.md b.md     only these
 *   node scripts/check-docs.mjs --list        also print every mention checked
 *
 * Prints `file:line: kind 'name' not found` for each problem and exits 1, or one summary line
 * and exits 0.
 *
 * Built on maintained tools, one concern per module under check-docs/: markdown.mjs parses
 * with remark (remark-parse, remark-gfm; unified-engine runs it) and checks links with
 * remark-validate-links; routes.mjs reads string literals with the TypeScript compiler API and
 * YAML with `yaml`; sql.mjs reads the migrations; files.mjs resolves paths; repo.mjs walks the
 * repository and lists the workspace packages.
 *
 * What is read: every *.md of the repository except under node_modules, dist, coverage, .git,
 * generated and the dot directories but .ci (.data, .tmp, .bench, .artifacts, .faults: run
 * output, ignored by git). Every kind but links is looked for in inline code spans (`...`)
 * only, each reported on the line it starts on; code blocks (fenced or indented) are examples
 * and commands and are skipped, and so is raw HTML.
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
 *   a path exists when its segments are a sequence of declared route strings: string and
 *   template literals beginning with `/` in the code, as the TypeScript compiler API parses it
 *   (services, packages including the stand-ins, apps, infra, scripts, test helpers; comments
 *   and *.test.* files excluded, since a test may assert that a removed route answers 404),
 *   plus `/...` words of the YAML scalars of infra/, k8s/ and docker-compose.yml (probe, scrape
 *   and ingress paths). A path may also be relative to a versioned mount the code declares
 *   (`/v1`, `/admin/v1`, `/internal/v1`), as a service README writes its own API
 *   (`POST /admissions`). A parameter matches a parameter only; a template's
 *   `${x}` segment also matches a word quoted on its line or the three above (`for (const action
 *   of ['suspend', 'unsuspend'])`); a declared string made of parameters only (`/:id`,
 *   `/{*route}`) is never a piece. The HTTP method is not checked (routes declare it in too
 *   many ways: router.get, route tables, the OpenAPI document). This finds a route that is gone
 *   from the code or misspelt; it cannot prove that the prefix a document implies is the one
 *   the route is mounted under (any sequence of declared pieces is accepted).
 * - package: `@gateway/<name>` must be a workspace package (pnpm-workspace.yaml's globs).
 * - link: a local link or image (`[x](path)`, `[x](path#anchor)`, `[x](#anchor)`, a reference
 *   definition), checked by remark-validate-links: the file or directory must exist, relative
 *   to the document, and an `#anchor` must be the GitHub slug (github-slugger) of a heading of
 *   the target Markdown file (or of a directory's README). URLs with a scheme and absolute paths
 *   are not checked (offline: no URL is fetched); neither are line anchors (`#L10`, `#L10-L20`)
 *   and `#readme`.
 *
 * Intentional mentions of things that no longer exist (a decisions log entry that says "`x` was
 * replaced by `y`"): put `<!-- docs-check: historical -->` on the line of the span, or wrap a
 * whole passage in `<!-- docs-check: historical-start -->` ... `<!-- docs-check: historical-end -->`.
 * Spans and links there are not checked. Use it only for text about the past; fix everything
 * else.
 */
import { resolve } from 'node:path';
import { fileBases, fileMentions } from './check-docs/files.mjs';
import { readMarkdown } from './check-docs/markdown.mjs';
import { ROOT, rel, walk, workspacePackages } from './check-docs/repo.mjs';
import { routeKnowledge, routeMentions } from './check-docs/routes.mjs';
import { sqlFunctionMentions, sqlKnowledge } from './check-docs/sql.mjs';

const KINDS = ['sql-function', 'route', 'file', 'package', 'link'];

async function main() {
  const only = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const list = process.argv.includes('--list');
  const markdown =
    only.length > 0
      ? only.map((file) => resolve(file))
      : walk(ROOT, (name) => name.endsWith('.md')).sort();
  const documents = await readMarkdown(markdown);
  const sql = sqlKnowledge();
  const routes = routeKnowledge();
  const packages = workspacePackages();
  const packageDirs = [...packages.values()];
  const problems = [];
  const checked = Object.fromEntries(KINDS.map((kind) => [kind, 0]));
  const distinct = Object.fromEntries(KINDS.map((kind) => [kind, new Set()]));

  for (const { path, spans, links, problems: linkProblems } of documents) {
    const report = (where, kind, mentions) => {
      for (const { name, found, why = '' } of mentions) {
        checked[kind]++;
        distinct[kind].add(name);
        if (list) console.log(`${where}: ${kind} '${name}'`);
        if (!found) problems.push(`${where}: ${kind} '${name}' not found${why}`);
      }
    };
    for (const { line, text, heading } of spans) {
      const where = `${rel(path)}:${line}`;
      report(where, 'sql-function', sqlFunctionMentions(text, sql));
      report(where, 'route', routeMentions(text, routes));
      report(where, 'file', fileMentions(text, path, fileBases(path, packageDirs, heading)));
      const named = [...text.matchAll(/@gateway\/[a-z0-9][a-z0-9-]*(?![\w*<-])/g)];
      report(
        where,
        'package',
        named.map(([name]) => ({ name, found: packages.has(name) })),
      );
    }
    const broken = new Map(linkProblems.filter((p) => p.url).map((p) => [`${p.line} ${p.url}`, p]));
    for (const { line, url } of links) {
      const problem = broken.get(`${line} ${url}`);
      report(`${rel(path)}:${line}`, 'link', [{ name: url, found: !problem, why: problem?.why }]);
    }
    for (const { line, why } of linkProblems.filter((p) => !p.url)) {
      problems.push(`${rel(path)}:${line}: ${why}`);
    }
  }

  if (problems.length > 0) {
    for (const p of problems) console.log(p);
    console.log(`check-docs: ${problems.length} problem(s) in ${markdown.length} Markdown files`);
    process.exit(1);
  }
  const counts = KINDS.map((kind) => `${checked[kind]} ${kind} (${distinct[kind].size} distinct)`);
  console.log(
    `check-docs: ${markdown.length} Markdown files OK; mentions checked: ${counts.join(', ')}; ` +
      `against ${sql.migrations} migrations, ${routes.pieces.length} route strings from ${routes.files} files`,
  );
}

await main();
