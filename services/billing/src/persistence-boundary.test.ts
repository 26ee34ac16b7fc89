import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * One persistence story: SQL, ORM calls and database drivers live in each area's
 * repository module, nowhere else in billing's source. A source scan, so a new query outside a
 * repository fails here rather than in review. Tests and test support are not scanned.
 */

const SRC = fileURLToPath(new URL('.', import.meta.url));

/** Where billing's statements may be, by area. */
const REPOSITORIES: Readonly<Record<string, readonly string[]>> = {
  // Infrastructure: the client, its pool and ping, the schema readiness check. Migrations
  // (db/migrate.ts) run through @gateway/runtime's shared runner and hold no SQL of their own.
  db: ['db/client.ts', 'db/schema-check.ts'],
  // Prisma's queries; the request path's prepared statements (admission, signing key, last use).
  identity: [
    'identity/identity-repository.ts',
    'identity/admission-repository.ts',
    'identity/rate-limit-repository.ts',
  ],
  // The hot path's prepared statements, the Prisma queries, the invariant check, and the
  // store's transactions (retry on deadlock, read-only snapshots).
  ledger: [
    'ledger/pg-hot-path.ts',
    'ledger/ledger-repository.ts',
    'ledger/invariant-queries.ts',
    'ledger/prisma-store.ts',
  ],
  idempotency: ['idempotency/idempotency-repository.ts'],
  usage: ['usage/usage-store.ts', 'usage/usage-checks.ts'],
  nodes: ['nodes/node-health-repository.ts'],
  dashboard: ['dashboard/dashboard-repository.ts'],
  budgets: ['budgets/budget-repository.ts'],
  // Account alerts: settings, evaluation's claims and figures, the outbox.
  alerts: ['alerts/alert-repository.ts'],
  // Receipts: a hold, its usage record and its ledger transactions, read.
  receipts: ['receipts/receipt-repository.ts'],
  // Stored Responses state: sealed responses and their item ids.
  responses: ['responses/response-repository.ts', 'responses/response-webhook-repository.ts'],
  // Finance's period report: ledger, holds and accounts, read in one snapshot.
  reports: ['reports/report-repository.ts', 'reports/period-repository.ts'],
};

const ORM_METHODS =
  'findUnique|findUniqueOrThrow|findFirst|findFirstOrThrow|findMany|create|createMany|' +
  'update|updateMany|upsert|delete|deleteMany|count|aggregate|groupBy';

/** What counts as touching the database, with why. */
const RULES: readonly { why: string; pattern: RegExp }[] = [
  { why: 'imports the pg driver', pattern: /^import (?!type )[^;]*from 'pg';/m },
  {
    why: 'imports Prisma',
    pattern: /^import (?!type )[^;]*from '[^']*(@prisma\/|generated\/prisma)/m,
  },
  {
    why: 'imports the Prisma namespace (raw SQL)',
    pattern: /^import (?!type )\{[^}]*(?<!type )\bPrisma\b[^}]*\} from '[^']*db\/client\.js';/m,
  },
  { why: 'runs raw SQL through Prisma', pattern: /\$(queryRaw|executeRaw)(Unsafe)?\b/ },
  {
    why: 'calls the ORM',
    pattern: new RegExp(`(\\bprisma|\\btx|\\bdb|#prisma|#db)\\.[a-z]\\w*\\.(${ORM_METHODS})\\(`),
  },
  { why: 'queries a pg pool or client', pattern: /\b(pool|client|db)\.query\s*(<[^>]*>)?\(/ },
  {
    why: 'contains SQL',
    pattern: /\b(?:SELECT\s+[\w*(']|INSERT\s+INTO\b|DELETE\s+FROM\b|UPDATE\s+\w+\s+SET\b)/,
  },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path);
    const scanned = /\.ts$/.test(entry.name) && !/\.(test|suite)\.ts$/.test(entry.name);
    return scanned ? [relative(SRC, path)] : [];
  });
}

/** Comments may name tables and statements; code may not. */
const withoutComments = (text: string): string =>
  text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

const violationsOf = (file: string): string[] => {
  const code = withoutComments(readFileSync(join(SRC, file), 'utf8'));
  return RULES.filter((rule) => rule.pattern.test(code)).map((rule) => rule.why);
};

describe('persistence boundary', () => {
  const repositories = new Set(Object.values(REPOSITORIES).flat());
  const files = sourceFiles(SRC).sort();

  it('has no SQL, ORM call or driver import outside the repositories', () => {
    const outside = files
      .filter((file) => !repositories.has(file))
      .map((file) => ({ file, violations: violationsOf(file) }))
      .filter(({ violations }) => violations.length > 0);
    expect(outside).toEqual([]);
  });

  it('lists repositories that exist and hold statements (the scan sees them)', () => {
    const idle = [...repositories].filter(
      (file) => !files.includes(file) || violationsOf(file).length === 0,
    );
    expect(idle).toEqual([]);
  });

  it('recognises each kind of database access (the scan can fail)', () => {
    const samples = [
      "import pg from 'pg';",
      "import { PrismaClient } from '../generated/prisma/client.js';",
      "import { Prisma } from '../db/client.js';",
      'await prisma.$queryRaw`x`;',
      'await tx.accountBalance.findMany({});',
      "await pool.query('x');",
      'const sql = `SELECT id FROM holds`;',
    ];
    const missed = samples.filter(
      (sample) => !RULES.some((rule) => rule.pattern.test(withoutComments(sample))),
    );
    expect(missed).toEqual([]);
    expect(RULES.some((rule) => rule.pattern.test("import type pg from 'pg';"))).toBe(false);
  });
});
