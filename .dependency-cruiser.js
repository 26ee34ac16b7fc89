/**
 * The repository's dependency rules, checked by dependency-cruiser (`pnpm check:deps`, part of
 * `pnpm test`) over the production sources: services/*\/src, packages/*\/src and
 * apps/dashboard/src. Tests, test support and Prisma's generated client are left out;
 * `tsconfig.depcruise.json` maps `@gateway/<pkg>` (and the contracts' subpaths) to the packages'
 * sources, so imports across packages are seen as edges between sources. Why: ADR 0056.
 *
 * The persistence rules see imports only. What they cannot see (SQL text, `$queryRaw`,
 * `pool.query(`, ORM calls outside a repository) is billing's persistence-boundary test, which
 * reads BILLING_REPOSITORIES from here.
 */

/**
 * Where billing's statements may be, by area, as paths under services/billing/src: the only
 * files that may import pg, @prisma/* or the generated Prisma client other than for types.
 * @type {Readonly<Record<string, readonly string[]>>}
 */
export const BILLING_REPOSITORIES = {
  // Infrastructure: the client, its pool and ping, the schema readiness check. Migrations
  // (db/migrate.ts) run through @gateway/runtime's shared runner and hold no SQL of their own.
  db: ['db/client.ts', 'db/schema-check.ts'],
  // Accounts, keys, scoped tokens and the catalog, through Prisma.
  identity: ['identity/identity-repository.ts'],
  // The request path's prepared statements: the batch admission, a token's signing key, the
  // key's last use.
  admission: ['admission/admission-repository.ts'],
  // The requests and tokens windows of accounts, keys and scoped tokens.
  'rate-limits': ['rate-limits/rate-limit-repository.ts'],
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

/**
 * The dispatcher's statements, as paths under services/dispatcher/src. Its pool comes from
 * @gateway/runtime, so today none of them imports pg other than for types.
 */
export const DISPATCHER_REPOSITORIES = [
  'db/schema-check.ts',
  'deliveries/delivery-queries.ts',
  'deliveries/delivery-repository.ts',
  'secrets/secret-repository.ts',
];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const onlyIn = (root, files) => `^${escape(root)}(${files.map(escape).join('|')})$`;

/** pg and Prisma's packages as pnpm lays them out (node_modules/.pnpm/…/node_modules/<name>/). */
const DRIVERS = '(^|/)node_modules/(pg|@prisma/[^/]+)/';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import cycle among production sources makes load order matter (a value read before ' +
        'its module ran is undefined) and ties the modules into one unit nobody can test or ' +
        'change alone. Break it by moving the shared part into a module both import.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'billing-persistence-boundary',
      severity: 'error',
      comment:
        "Billing's database access lives in its repository files (BILLING_REPOSITORIES): only " +
        'they may import pg, @prisma/* or the generated Prisma client other than for types. ' +
        'Add a repository (and list it) rather than querying from a service or a route.',
      from: {
        path: '^services/billing/src/',
        pathNot: onlyIn('services/billing/src/', Object.values(BILLING_REPOSITORIES).flat()),
      },
      to: {
        path: [DRIVERS, '^services/billing/src/generated/prisma/'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'dispatcher-persistence-boundary',
      severity: 'error',
      comment:
        "The dispatcher's database access lives in its repository files " +
        '(DISPATCHER_REPOSITORIES): only they may import pg or Prisma other than for types.',
      from: {
        path: '^services/dispatcher/src/',
        pathNot: onlyIn('services/dispatcher/src/', DISPATCHER_REPOSITORIES),
      },
      to: { path: DRIVERS, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-cross-service-imports',
      severity: 'error',
      comment:
        'A service is deployed alone and talks to the others over HTTP and the bus: importing ' +
        "another service's sources would ship that code twice and couple their releases. " +
        'Share through a package (the wire shapes are in @gateway/contracts).',
      from: { path: '^services/([^/]+)/' },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'packages-by-name',
      severity: 'error',
      comment:
        'A package is used through its name (@gateway/<pkg>) and its index, never by a relative ' +
        'path into its src: its internals can then change without breaking the importers, and ' +
        'the import resolves the same in the build (dist) as in the sources.',
      from: { path: '^(services|packages|apps)/([^/]+)/' },
      to: { path: '^packages/', pathNot: '^$1/$2/', dependencyTypesNot: ['aliased'] },
    },
    {
      name: 'packages-not-services',
      severity: 'error',
      comment:
        'Packages are the shared layer below the services and the dashboard: a package that ' +
        'imports one of them turns the layering upside down (and cycles through the build).',
      from: { path: '^packages/' },
      to: { path: '^(services|apps)/' },
    },
    {
      name: 'contracts-self-contained',
      severity: 'error',
      comment:
        '@gateway/contracts is the wire shapes every end (services, packages, the browser) ' +
        'imports: it depends on nothing of ours, so it stays browser-safe and never pulls a ' +
        'service or runtime into the dashboard.',
      from: { path: '^packages/contracts/' },
      to: { path: '^(services|packages|apps)/', pathNot: '^packages/contracts/' },
    },
    {
      name: 'dashboard-only-contracts',
      severity: 'error',
      comment:
        'The dashboard runs in the browser and knows the gateway only by its HTTP API: of our ' +
        'code it imports @gateway/contracts alone (no Node-only package, no service source).',
      from: { path: '^apps/dashboard/' },
      to: { path: '^(services|packages)/', pathNot: '^packages/contracts/' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment:
        'An import dependency-cruiser cannot resolve is one no rule above can judge (and one ' +
        'the compiler would reject): fix the import or the resolution (tsconfig.depcruise.json).',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Only what ships: tests and their support (`*.suite.ts`) are not cruised at all.
    exclude: { path: ['\\.test\\.tsx?$', '\\.suite\\.ts$'] },
    // Seen as import targets (the persistence rules need them), not analysed themselves.
    doNotFollow: { path: ['(^|/)node_modules/', '^services/billing/src/generated/'] },
    // Keep imports TypeScript erases (`import type`), marked type-only, so rules can tell them.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.depcruise.json' },
    // Node's ESM resolution for npm packages (their `exports` maps: gpt-tokenizer's subpaths).
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'node', 'default'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
    reporterOptions: { text: { highlightFocused: true } },
  },
};
