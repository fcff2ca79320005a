/**
 * Row identity of a guard transaction: which rows that existed before it the client's open transaction updated,
 * deleted or locked, read at its COMMIT from another session (the guard's own), where those rows still show
 * their old version with the client's transaction id as `xmax`. Rows the transaction inserted are not visible
 * there (their keys came from the server, valueComparison.ts's provenance rule), so only rows it found count.
 * By primary key; a table without one, or too large to scan at a COMMIT, is left to the rows-per-table bound.
 */
import type { TouchedRows } from '../../core/approvals/ticket';
import type { Db } from '../../core/db/db';
import type { ChangedTable } from '../../core/sql/tableEffects';

/** Tables above this many pages (8 kB each) are not scanned at a COMMIT. */
const MAX_PAGES = 12_800;
/** Keys kept per table; past it, the count bound alone applies. */
const MAX_KEYS = 1000;

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** `xid`: the client's transaction id as a 32-bit xid (text), as xmax shows it. */
export async function touchedRows(db: Db, changed: readonly ChangedTable[], xid: string): Promise<TouchedRows[]> {
  const touched: TouchedRows[] = [];
  for (const table of changed.filter((c) => c.updated + c.deleted > 0)) {
    const qualified = `${ident(table.schema)}.${ident(table.name)}`;
    const key = await db.query<{ name: string; pages: number }>(
      `SELECT a.attname AS name, c.relpages::int AS pages
       FROM pg_class c JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
       JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) ON true
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
       WHERE c.oid = to_regclass($1) ORDER BY k.n`,
      [qualified],
    );
    if (key.rows.length === 0 || (key.rows[0]?.pages ?? 0) > MAX_PAGES) continue;
    const columns = key.rows.map((r) => `${ident(r.name)}::text`).join(', ');
    const rows = await db.query<{ key: string }>(
      `SELECT json_build_array(${columns})::text AS key FROM ${qualified} WHERE xmax::text = $1 LIMIT ${MAX_KEYS + 1}`,
      [xid],
    );
    if (rows.rows.length > MAX_KEYS) continue;
    touched.push({ schema: table.schema, name: table.name, keys: rows.rows.map((r) => r.key).sort() });
  }
  return touched;
}

/** What differs between the approved rows and the retry's, one line per table. */
export function rowDifferences(approved: readonly TouchedRows[] | undefined, now: readonly TouchedRows[]): string[] {
  if (approved === undefined) return [];
  const lines: string[] = [];
  const named = (r: TouchedRows) => `${r.schema}.${r.name}`;
  const ours = new Map(now.map((r) => [named(r), r.keys]));
  for (const table of approved) {
    const keys = ours.get(named(table)) ?? [];
    const missing = table.keys.filter((k) => !keys.includes(k));
    const extra = keys.filter((k) => !table.keys.includes(k));
    if (missing.length > 0 || extra.length > 0)
      lines.push(`${named(table)}: other rows (approved keys ${shortList(table.keys)}, now ${shortList(keys)})`);
  }
  for (const table of now)
    if (!approved.some((a) => named(a) === named(table)) && table.keys.length > 0)
      lines.push(`${named(table)}: rows the approved run did not touch (${shortList(table.keys)})`);
  return lines;
}

const shortList = (keys: readonly string[]): string =>
  keys.length === 0 ? 'none' : `${keys.slice(0, 5).join(' ')}${keys.length > 5 ? ` … ${keys.length} in all` : ''}`;
