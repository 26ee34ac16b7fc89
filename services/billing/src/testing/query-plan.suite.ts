import type pg from 'pg';

/**
 * The plan PostgreSQL makes for `select`, with each node's output expressions (`EXPLAIN
 * (VERBOSE, COSTS OFF)`), as one text: tests read it to see whether a SQL function was inlined
 * into its caller (its body's expressions appear, not its name).
 */
export async function verbosePlan(
  db: Pick<pg.ClientBase, 'query'>,
  select: string,
): Promise<string> {
  const { rows } = await db.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (VERBOSE, COSTS OFF) ${select}`,
  );
  return rows.map((row) => row['QUERY PLAN']).join('\n');
}
