/** The schema diff tests' catalog equality: a database's diff snapshot, without what differs by name only. */
import pg from 'pg';
import { readDiffSnapshot } from '../../src/core/diff/diffCatalog';
import type { DiffSnapshot } from '../../src/core/diff/diffSnapshot';

/** A snapshot without what differs between two databases by name only, nor a migration tool's own bookkeeping. */
export function comparable(s: DiffSnapshot): Omit<DiffSnapshot, 'database'> {
  const { database: _database, ...rest } = s;
  const ours = <T extends { name: string; table?: string }>(items: T[]) =>
    items.filter((i) => !`${i.table ?? ''} ${i.name}`.includes('knex_migrations'));
  return {
    ...rest,
    tables: ours(rest.tables),
    sequences: ours(rest.sequences),
    constraints: ours(rest.constraints),
    indexes: ours(rest.indexes),
    ...(rest.grants ? { grants: ours(rest.grants) } : {}),
    // Read in creation order (what the diff makes them in); a function made again is newer, not different.
    ...(rest.functions
      ? {
          functions: [...rest.functions].sort((x, y) =>
            `${x.schema}\u0000${x.name}\u0000${x.args}`.localeCompare(`${y.schema}\u0000${y.name}\u0000${y.args}`),
          ),
        }
      : {}),
  };
}

export async function snapshotOf(url: string): Promise<DiffSnapshot> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await readDiffSnapshot({
      query: async (sql: string, params?: readonly unknown[]) => {
        const r = await client.query(sql, params as unknown[]);
        return { fields: r.fields, rows: r.rows, rowCount: r.rowCount };
      },
      queryText: async (sql: string, params?: readonly unknown[]) => {
        const r = await client.query<(string | null)[]>({
          text: sql,
          values: params as unknown[],
          rowMode: 'array',
          types: { getTypeParser: () => (value: string) => value },
        });
        return { fields: r.fields, rows: r.rows, rowCount: r.rowCount };
      },
    } as never);
  } finally {
    await client.end();
  }
}
