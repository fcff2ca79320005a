/**
 * The key columns of a table (its primary key and unique constraints' and indexes' columns), from the catalog:
 * a value an UPDATE sets on one of them chooses which row is which, so it never varies on retry (varyingValues.ts).
 */
import type { Db } from '../../core/db/db';

export async function keyColumnsOf(db: Db, table: string): Promise<ReadonlySet<string>> {
  const result = await db.query<{ name: string }>(
    `SELECT DISTINCT a.attname AS name
     FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
     WHERE i.indrelid = to_regclass($1) AND (i.indisprimary OR i.indisunique)`,
    [table],
  );
  return new Set(result.rows.map((r) => r.name));
}
