/**
 * Prisma CLI configuration for billing (Prisma 6.19, no native engines).
 *
 * - `engine: 'js'` + `adapter` make the CLI use its WASM schema engine through
 *   `@prisma/adapter-pg` instead of downloading the native `schema-engine` binary (which fails
 *   without internet access).
 * - The adapter carries workarounds for defects of that path in 6.19 (all seen here):
 *   1. prisma/orm#27403: catalog queries return columns of type `name` (OID 19), `name[]` (1003)
 *      and `"char"` (18), which the adapter cannot deserialize ("Column type 'name' could not be
 *      deserialized"). `name`/`name[]` are read as text/text[]; `"char"` is read as text and
 *      reported as a character column, because the engine reads `pg_constraint.contype` as a
 *      character (reported as text, the WASM engine panics, "unreachable", as soon as a CHECK
 *      constraint exists: `migrate diff --from-migrations`, `migrate dev`).
 *   2. The adapter's `executeScript` splits a migration on every `;`, which breaks function
 *      bodies (`$$ ... ; ... $$`, see the ledger triggers). Scripts are sent whole instead, as one
 *      simple-protocol query (how the native engine sends them).
 *   3. Its shadow database is dropped before its pool is closed, which fails ("being accessed by
 *      other users") and leaves `prisma_migrate_shadow_db_*` databases behind; here the pool is
 *      closed first.
 *   The adapter is built from discrete host/port/user/password/database fields, not a connection
 *   string, so that the shadow database gets its own connection settings.
 * - The CLI finishes in about a second but then lingers ~10 s on a timer inside the WASM engine.
 *   The service itself migrates with `src/db/migrate.ts`, not the CLI (see prisma/README.md).
 *
 * `prisma generate` must see a syntactically valid DATABASE_URL (no server is contacted); a
 * placeholder is set for it when none is given. Commands that connect refuse the placeholder.
 */
import { randomUUID } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { defineConfig } from 'prisma/config';

const givenUrl = process.env.DATABASE_URL;
if (!givenUrl) process.env.DATABASE_URL = 'postgresql://placeholder@127.0.0.1:1/placeholder';

const CHAR_OID = 18;
/** Result-column type OIDs the adapter cannot read → an OID it reads the same way. */
const OID_REMAP: Record<number, number> = { 19: 25, 1003: 1009, [CHAR_OID]: 25 };
/** `ColumnTypeEnum.Character` of @prisma/driver-adapter-utils. */
const COLUMN_TYPE_CHARACTER = 6;
/** Marks, on a result's rows array, which columns were `"char"` (read as text by the adapter). */
const CHAR_COLUMNS = Symbol('charColumns');

interface FieldLike {
  dataTypeID: number;
}
interface ResultLike {
  fields?: FieldLike[];
  rows?: unknown[] & { [CHAR_COLUMNS]?: number[] };
}

function remapFields<T>(result: T): T {
  for (const one of Array.isArray(result) ? result : [result]) {
    const { fields = [], rows } = (one ?? {}) as ResultLike;
    const charColumns: number[] = [];
    fields.forEach((field, index) => {
      if (field.dataTypeID === CHAR_OID) charColumns.push(index);
      const replacement = OID_REMAP[field.dataTypeID];
      if (replacement !== undefined) field.dataTypeID = replacement;
    });
    if (rows && charColumns.length > 0) {
      Object.defineProperty(rows, CHAR_COLUMNS, { value: charColumns, enumerable: false });
    }
  }
  return result;
}

/** pg.Client whose query results report the remapped type OIDs (callback and promise forms). */
class CatalogFriendlyClient extends pg.Client {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const last: unknown = args[args.length - 1];
    if (typeof last === 'function') {
      args[args.length - 1] = (error: unknown, result: unknown) =>
        (last as (e: unknown, r: unknown) => void)(error, error ? result : remapFields(result));
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return (super.query as any)(...args);
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const pending: any = (super.query as any)(...args);
    return pending && typeof pending.then === 'function' ? pending.then(remapFields) : pending;
  }
}

function poolConfig(url: string, database?: string): pg.PoolConfig {
  const parsed = new URL(url);
  return {
    host: decodeURIComponent(parsed.hostname),
    port: parsed.port ? Number(parsed.port) : 5432,
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: database ?? decodeURIComponent(parsed.pathname.slice(1)),
    max: 2,
    Client: CatalogFriendlyClient,
  };
}

type Adapter = Awaited<ReturnType<PrismaPg['connect']>>;
type Queryable = Pick<Adapter, 'queryRaw'>;

/** Reports `"char"` columns as characters: the engine reads e.g. `pg_constraint.contype` so. */
function charColumnsAsCharacter<T extends Queryable>(queryable: T): T {
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.queryRaw = async (query) => {
    const result = await queryRaw(query);
    const rows = result.rows as ResultLike['rows'];
    for (const index of rows?.[CHAR_COLUMNS] ?? [])
      result.columnTypes[index] = COLUMN_TYPE_CHARACTER;
    return result;
  };
  return queryable;
}

/** Applies the workarounds to a connected adapter and the transactions it starts. */
function patched(adapter: Adapter): Adapter {
  charColumnsAsCharacter(adapter);
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (isolationLevel) =>
    charColumnsAsCharacter(await startTransaction(isolationLevel));
  // Send a migration script whole instead of splitting it on every `;`.
  adapter.executeScript = async (script: string) => {
    await adapter.executeRaw({ sql: script, args: [], argTypes: [] });
  };
  return adapter;
}

function requireUrl(): string {
  if (!givenUrl) throw new Error('DATABASE_URL is required for Prisma commands that connect');
  return givenUrl;
}

class BillingMigrationAdapter extends PrismaPg {
  override async connect(): Promise<Adapter> {
    requireUrl();
    return patched(await super.connect());
  }

  /**
   * Like the adapter's own (a fresh database on the same server), but its pool is closed
   * before the database is dropped; the stock version drops first and fails ("being accessed
   * by other users"), leaving the shadow database behind.
   */
  override async connectToShadowDb(): Promise<Adapter> {
    const url = requireUrl();
    const main = await this.connect();
    const database = `prisma_migrate_shadow_db_${randomUUID()}`;
    await main.executeScript(`CREATE DATABASE "${database}"`);
    const shadow = patched(await new PrismaPg(poolConfig(url, database)).connect());
    const disposeShadow = shadow.dispose.bind(shadow);
    shadow.dispose = async () => {
      await disposeShadow();
      await main.executeScript(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await main.dispose();
    };
    return shadow;
  }
}

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  experimental: { adapter: true },
  engine: 'js',
  // Built for every command, even those that never connect (generate, diff from files).
  adapter: async () => new BillingMigrationAdapter(poolConfig(process.env.DATABASE_URL ?? '')),
});
