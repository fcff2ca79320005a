/**
 * What a preview reads besides running the statements (impact.ts): the tables whose inserts draw sequence values,
 * the planner's row estimate of a statement, and the rows of a table a TRUNCATE empties.
 */
import type { DbSession } from '../db/db';
import { DbQueryError } from '../db/dbErrors';
import type { StatementClassification } from './classification';
import { plannedRowsOf } from './plannedRows';
import type { ChangedTable } from './tableEffects';
import { quoteQualified } from './tableEffects';

/** Tables an INSERT or MERGE of the input fills whose columns draw from a sequence (serial or identity). */
export async function tablesUsingSequences(
  session: DbSession,
  statements: readonly StatementClassification[],
): Promise<string[]> {
  const targets = statements
    .filter((s) => s.kind === 'InsertStmt' || s.kind === 'MergeStmt')
    .flatMap((s) => s.writesTo);
  if (targets.length === 0) return [];
  const result = await session.query<{ name: string }>(
    `SELECT DISTINCT c.oid::regclass::text AS name
     FROM unnest($1::text[]) AS t(n) JOIN pg_class c ON c.oid = to_regclass(t.n)
     WHERE EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attidentity <> '' AND NOT a.attisdropped)
        OR EXISTS (SELECT 1 FROM pg_attrdef d WHERE d.adrelid = c.oid AND pg_get_expr(d.adbin, d.adrelid) LIKE '%nextval(%')
     ORDER BY 1`,
    [targets.map(quoteQualified)],
  );
  return result.rows.map((r) => r.name);
}

/**
 * Rows the planner expects the statement to write: the sum of the row estimates of the children of
 * its ModifyTable nodes. Null when the statement cannot be explained (DDL, utility statements).
 */
export async function planEstimate(session: DbSession, sql: string): Promise<number | null> {
  await session.query('SAVEPOINT pgagent_explain');
  try {
    const result = await session.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`);
    await session.query('RELEASE SAVEPOINT pgagent_explain');
    return plannedRowsOf(result.rows[0]?.['QUERY PLAN']);
  } catch (error) {
    await session.query('ROLLBACK TO SAVEPOINT pgagent_explain');
    if (error instanceof DbQueryError) return null;
    throw error;
  }
}

export async function countRows(session: DbSession, tables: readonly string[]): Promise<ChangedTable[]> {
  const counted: ChangedTable[] = [];
  for (const table of tables) {
    const result = await session.query<{ relid: number; schema: string; name: string; n: number }>(
      `SELECT c.oid::int8::float8 AS relid, n.nspname AS schema, c.relname AS name,
              (SELECT count(*) FROM ${quoteQualified(table)})::float8 AS n
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)`,
      [quoteQualified(table)],
    );
    const row = result.rows[0];
    if (row)
      counted.push({ relid: row.relid, schema: row.schema, name: row.name, inserted: 0, updated: 0, deleted: row.n });
  }
  return counted;
}
