// SQL functions: what the migrations create, drop and rename, in the order they run, and the
// spans of a document that name one.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, read, rel, walk } from './repo.mjs';

const SQL_NAME = String.raw`(?:"?[A-Za-z_][A-Za-z0-9_]*"?\.)?"?([A-Za-z_][A-Za-z0-9_]*)"?`;

function stripSqlComments(sql) {
  return sql.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/--[^\n]*/g, ' ');
}

/** The first two words of a snake_case name (`billing_admit` of `billing_admit_v2`). */
function stem(name) {
  const words = name.split('_');
  return words.length >= 2 ? `${words[0]}_${words[1]}` : undefined;
}

/**
 * The functions of the migrations (a .sql file in a migrations directory of a service, applied
 * in path order): `live` (created and still there), `dropped` (name -> the migration that dropped
 * or renamed it), `identifiers` (every other word of the schema: tables, columns...) and `stems`.
 */
export function sqlKnowledge() {
  const migrations = [];
  for (const service of readdirSync(join(ROOT, 'services'))) {
    const files = walk(join(ROOT, 'services', service), (name, path) => {
      return name.endsWith('.sql') && rel(path).split('/').includes('migrations');
    });
    migrations.push(...files.sort());
  }
  const live = new Set();
  const dropped = new Map();
  const identifiers = new Set();
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

/**
 * The SQL functions a span names, each `{ name, found, why }`: calls `name(...)` with a
 * snake_case name (built-ins excepted), and a span that is exactly a snake_case name sharing its
 * stem with a function of the migrations, unless it is another identifier of the schema.
 */
export function sqlFunctionMentions(text, sql) {
  const called = [...text.matchAll(/\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\s*\(/g)].map((x) => x[1]);
  const names = called.filter((name) => !isBuiltin(name));
  if (/^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/.test(text)) {
    const known = sql.live.has(text) || sql.dropped.has(text);
    if (known || (sql.stems.has(stem(text)) && !sql.identifiers.has(text))) names.push(text);
  }
  return names.map((name) => {
    const by = sql.dropped.get(name);
    return {
      name,
      found: sql.live.has(name),
      why: by && !sql.live.has(name) ? ` (dropped by ${by})` : '',
    };
  });
}
