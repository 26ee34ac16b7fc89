/**
 * Migration files on disk: reading one (its checksum, refusing transaction control), and the two
 * layouts the services use (Prisma's `<name>/migration.sql`, and `NNN_name.sql`).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

export interface SqlMigration {
  /** Shown in logs and errors, e.g. `20261121005140_init` or `1_init`. */
  id: string;
  /** SHA-256 hex of the file's bytes (as Prisma computes it). */
  checksum: string;
  sql: string;
}

/**
 * Transaction control on a line of its own (plpgsql's block `BEGIN` takes no semicolon; `END;`
 * is left alone because it also closes plpgsql blocks).
 */
const TRANSACTION_CONTROL = /^\s*(BEGIN|START\s+TRANSACTION|COMMIT|ROLLBACK)\s*;/im;

/** Reads one migration file: its checksum and text, refusing transaction control. */
export function readMigrationFile(file: string, id: string): SqlMigration {
  const bytes = readFileSync(file);
  const sql = bytes.toString('utf8');
  if (TRANSACTION_CONTROL.test(sql)) {
    throw new Error(
      `migration ${id} contains BEGIN/COMMIT: each migration already runs in a ` +
        'transaction; remove those lines',
    );
  }
  return { id, checksum: createHash('sha256').update(bytes).digest('hex'), sql };
}

/** Prisma's layout, `<name>/migration.sql`, applied in lexicographic order of the names. */
export function loadMigrationDirectories(dir: string): SqlMigration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const file = path.join(dir, name, 'migration.sql');
      if (!existsSync(file)) throw new Error(`migration ${name} has no migration.sql`);
      return readMigrationFile(file, name);
    });
}

export interface NumberedMigration extends SqlMigration {
  version: number;
  name: string;
}

const NUMBERED_FILE = /^(\d{3})_([a-z0-9_]+)\.sql$/;

/** `NNN_name.sql` files, versions 1, 2, 3... with no gap; id `<version>_<name>`. */
export function loadNumberedMigrations(dir: string): NumberedMigration[] {
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => {
      const match = NUMBERED_FILE.exec(file);
      if (!match) throw new Error(`migration file ${file} is not named NNN_name.sql`);
      const [version, name] = [Number(match[1]), match[2]!];
      return { ...readMigrationFile(path.join(dir, file), `${version}_${name}`), version, name };
    });
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error('migration versions must be 1, 2, 3...');
  });
  return migrations;
}

/** A short digest of migrations (ids and checksums): changes whenever one does. */
export function migrationsFingerprint(migrations: readonly SqlMigration[]): string {
  const hash = createHash('sha256');
  for (const migration of migrations) hash.update(`${migration.id}:${migration.checksum}\n`);
  return hash.digest('hex').slice(0, 12);
}
