import pg from 'pg';

export interface RolePrivileges {
  /** Every table (and view) of the public schema → the role's privileges on it, sorted. */
  tables: Record<string, string[]>;
  /** Every sequence of the public schema → the role's privileges on it, sorted. */
  sequences: Record<string, string[]>;
}

/**
 * What `role` may do on every relation of the database's public schema, read from the catalog
 * (as the owner at `ownerUrl`). Tests compare it with a service's privilege map: an object the
 * map forgets, or a privilege granted outside it, shows up as a difference.
 */
export async function rolePrivileges(ownerUrl: string, role: string): Promise<RolePrivileges> {
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; kind: string; privilege: string | null }>(
      `SELECT c.relname AS name, c.relkind::text AS kind, a.privilege_type AS privilege
         FROM pg_class c
         LEFT JOIN LATERAL aclexplode(c.relacl) a ON a.grantee = to_regrole($1)
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S', 'v', 'm', 'p')`,
      [role],
    );
    const result: RolePrivileges = { tables: {}, sequences: {} };
    for (const row of rows) {
      const group = row.kind === 'S' ? result.sequences : result.tables;
      const privileges = (group[row.name] ??= []);
      if (row.privilege) privileges.push(row.privilege);
    }
    for (const group of [result.tables, result.sequences]) {
      for (const privileges of Object.values(group)) privileges.sort();
    }
    return result;
  } finally {
    await client.end();
  }
}

/** A privilege map in the shape `rolePrivileges` returns (lists copied and sorted). */
export const sortedPrivileges = (
  map: Readonly<Record<string, readonly string[]>>,
): Record<string, string[]> =>
  Object.fromEntries(Object.entries(map).map(([name, list]) => [name, [...list].sort()]));
