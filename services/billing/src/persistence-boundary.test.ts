import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/*
 * One persistence story: SQL, ORM calls and database drivers live in each area's repository
 * module, nowhere else in billing's source. The imports (pg, @prisma/*, the generated client)
 * are dependency-cruiser's `billing-persistence-boundary` rule (`pnpm check:deps`); this test
 * is the part an import graph cannot see: each production file outside the repositories is
 * parsed with the TypeScript compiler and its syntax tree searched for SQL text, raw queries
 * and ORM calls. The repository list is the dependency-cruiser config's (BILLING_REPOSITORIES),
 * so both checks agree on it. Tests, suites and the generated client are not scanned.
 */

const SRC = fileURLToPath(new URL('.', import.meta.url));
const CONFIG = pathToFileURL(join(SRC, '../../../.dependency-cruiser.js')).href;
const { BILLING_REPOSITORIES } = (await import(CONFIG)) as {
  BILLING_REPOSITORIES: Readonly<Record<string, readonly string[]>>;
};

/** Prisma's model delegate methods (`prisma.<model>.<method>(…)`). */
const ORM_METHODS = new Set([
  'findUnique',
  'findUniqueOrThrow',
  'findFirst',
  'findFirstOrThrow',
  'findMany',
  'create',
  'createMany',
  'createManyAndReturn',
  'update',
  'updateMany',
  'updateManyAndReturn',
  'upsert',
  'delete',
  'deleteMany',
  'count',
  'aggregate',
  'groupBy',
]);
/** What a Prisma client or transaction is called here (`prisma`, `tx`, `db`, `this.#prisma`). */
const CLIENT_NAMES = new Set(['prisma', 'tx', 'db']);
/** Prisma's raw SQL and transactions, as client members. */
const RAW_MEMBERS = new Set([
  '$queryRaw',
  '$queryRawUnsafe',
  '$executeRaw',
  '$executeRawUnsafe',
  '$transaction',
]);
/** A statement's opening: SELECT with something to select, INSERT INTO, UPDATE … SET, DELETE FROM. */
const SQL = /\b(?:SELECT\s+[\w*("'$]|INSERT\s+INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b)/;
/** Modules that are the database (also dependency-cruiser's rule; here so a repository's count). */
const DRIVER = /^(pg|@prisma\/.+)$|generated\/prisma\//;

/** The name an expression ends in: `prisma`, `this.prisma`, `this.#prisma` → `prisma`. */
const lastName = (node: ts.Expression): string | undefined => {
  if (ts.isIdentifier(node)) return node.text;
  if (ts.isPropertyAccessExpression(node)) return node.name.text.replace(/^#/, '');
  return undefined;
};

/** A template's text, its substitutions as `$1` (the way they reach SQL). */
const templateText = (node: ts.TemplateExpression): string =>
  node.head.text + node.templateSpans.map((span) => `$1${span.literal.text}`).join('');

const isValueImport = (node: ts.ImportDeclaration): boolean => {
  const clause = node.importClause;
  if (!clause) return true; // `import 'pg'` runs the module
  if (clause.isTypeOnly) return false;
  if (clause.name) return true;
  const bindings = clause.namedBindings;
  if (!bindings || ts.isNamespaceImport(bindings)) return true;
  return bindings.elements.length === 0 || bindings.elements.some((e) => !e.isTypeOnly);
};

/** What in a source text touches the database, one reason per finding (`line: why`). */
function findingsIn(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const findings: string[] = [];
  const flag = (node: ts.Node, why: string) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    findings.push(`${line}: ${why}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const from = node.moduleSpecifier.text;
      if (DRIVER.test(from) && isValueImport(node)) flag(node, `imports ${from}`);
      const named = node.importClause?.namedBindings;
      const prismaValue =
        /(^|\/)db\/client\.js$|^\.\/client\.js$/.test(from) &&
        !node.importClause?.isTypeOnly &&
        named !== undefined &&
        ts.isNamedImports(named) &&
        named.elements.some((e) => !e.isTypeOnly && (e.propertyName ?? e.name).text === 'Prisma');
      if (prismaValue) flag(node, 'imports the Prisma namespace (raw SQL)');
      return; // a module name is not SQL
    }
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      if (SQL.test(node.text)) flag(node, 'contains SQL');
    } else if (ts.isTemplateExpression(node)) {
      if (SQL.test(templateText(node))) flag(node, 'contains SQL');
    } else if (ts.isPropertyAccessExpression(node) && RAW_MEMBERS.has(node.name.text)) {
      flag(node, `uses Prisma's ${node.name.text}`);
    } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const callee = node.expression;
      if (callee.name.text === 'query') flag(node, 'calls .query() (a pg pool or client)');
      const model = callee.expression;
      if (
        ORM_METHODS.has(callee.name.text) &&
        ts.isPropertyAccessExpression(model) &&
        /^[a-z]/.test(model.name.text) &&
        CLIENT_NAMES.has(lastName(model.expression) ?? '')
      ) {
        flag(node, `calls the ORM (${model.name.text}.${callee.name.text})`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path);
    const scanned = /\.ts$/.test(entry.name) && !/\.(test|suite)\.ts$/.test(entry.name);
    return scanned ? [relative(SRC, path)] : [];
  });
}

const findingsOf = (file: string): string[] =>
  findingsIn(file, readFileSync(join(SRC, file), 'utf8'));

describe('persistence boundary', () => {
  const repositories = new Set(Object.values(BILLING_REPOSITORIES).flat());
  const files = sourceFiles(SRC).sort();

  it('has no SQL, raw query or ORM call outside the repositories', () => {
    const outside = files
      .filter((file) => !repositories.has(file))
      .map((file) => ({ file, findings: findingsOf(file) }))
      .filter(({ findings }) => findings.length > 0);
    expect(outside).toEqual([]);
  });

  it('lists repositories that exist and hold statements (the scan sees them)', () => {
    const idle = [...repositories].filter(
      (file) => !files.includes(file) || findingsOf(file).length === 0,
    );
    expect(idle).toEqual([]);
  });

  it('recognises each kind of database access (the scan can fail)', () => {
    const samples = [
      "import pg from 'pg';",
      "import { PrismaClient } from '../generated/prisma/client.js';",
      "import { Prisma } from '../db/client.js';",
      'await prisma.$queryRaw`x`;',
      "await this.#prisma.$executeRawUnsafe('x');",
      'await tx.accountBalance.findMany({});',
      'await this.#db.hold.update({});',
      "await pool.query('x');",
      'await client.query<Row>(statement, []);',
      "const q = 'SELECT 1 FROM accounts';",
      'const sql = `SELECT ${columns} FROM holds WHERE id = ${id}`;',
      "const s = 'INSERT INTO ledger_entries (id) VALUES ($1)';",
      "const s = 'UPDATE holds SET state = $1';",
      "const s = 'DELETE FROM holds';",
    ];
    const missed = samples.filter((sample) => findingsIn('sample.ts', sample).length === 0);
    expect(missed).toEqual([]);
  });

  it('leaves types, comments and prose alone', () => {
    const innocent = [
      "import type pg from 'pg';",
      "import { type Prisma, createPrismaClient } from '../db/client.js';",
      "import type { PrismaClient } from '../generated/prisma/client.js';",
      '// SELECT id FROM holds: a comment may name a statement',
      "const grants = ['SELECT', 'INSERT', 'UPDATE', 'DELETE'];",
      "const message = 'select a model from the list';",
      'const rows = items.filter((item) => item.count > 0);',
    ];
    const flagged = innocent.filter((sample) => findingsIn('sample.ts', sample).length > 0);
    expect(flagged).toEqual([]);
  });
});
