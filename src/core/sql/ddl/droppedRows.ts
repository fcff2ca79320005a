/**
 * The rows a DROP TABLE or TRUNCATE destroys, counted where that is cheap: `count(*)` of each table it drops or
 * empties, in a READ ONLY transaction under the same 250 ms budget as every other DDL analysis (statement and lock
 * timeout), so a person sees "125 rows (counted)" rather than the planner's 100. A table too big to count in time
 * keeps the planner's number, said as an estimate ("≈ 100 rows (estimate)"). Nothing else is touched.
 */
import type { Db } from '../../db/db';
import type { StatementClassification } from '../classification';
import { quoteQualified } from '../tableEffects';

const BUDGET_MS = 250;

interface CountedLock {
  table: string;
  rows: number | null;
  blocks: string;
}

/** `locks` with `rows`/`rowsExact` set for each table a DROP TABLE or TRUNCATE of `statements` destroys. */
export async function withDroppedRows<L extends CountedLock>(
  db: Db,
  statements: readonly StatementClassification[],
  locks: readonly L[],
): Promise<(L & { rowsExact?: boolean })[]> {
  // The statement names its tables as written ("orders"); the locks are qualified ("public.orders").
  const named = statements
    .filter((s) => s.destructive && (s.kind === 'DropStmt' || s.kind === 'TruncateStmt'))
    .flatMap((s) => [...s.tables, ...s.writesTo]);
  const destroyed = new Set(
    locks.filter((l) => named.some((t) => l.table === t || l.table.endsWith(`.${t}`))).map((l) => l.table),
  );
  const targets = locks.filter((l) => destroyed.has(l.table) && l.rows !== null);
  if (targets.length === 0) return [...locks];
  const counted = await countRowsBriefly(
    db,
    targets.map((l) => ({ key: l.table, from: quoteQualified(l.table) })),
  );
  return locks.map((l) =>
    !destroyed.has(l.table) || l.rows === null
      ? l
      : counted.has(l.table)
        ? { ...l, rows: counted.get(l.table) ?? l.rows, rowsExact: true }
        : { ...l, rowsExact: false },
  );
}

/**
 * `count(*)` of each table (`from`: its quoted name), in a READ ONLY transaction under the DDL analysis budget; a
 * table that cannot be counted in time (or at all) is left out of the map: its caller says an estimate instead.
 */
export async function countRowsBriefly(
  db: Db,
  tables: readonly { key: string; from: string }[],
): Promise<Map<string, number>> {
  const counted = new Map<string, number>();
  if (tables.length === 0) return counted;
  await db
    .withSession(async (session) => {
      await session.query('BEGIN READ ONLY');
      try {
        await session.query(`SET LOCAL statement_timeout = ${BUDGET_MS}`);
        await session.query(`SET LOCAL lock_timeout = ${BUDGET_MS}`);
        for (const table of tables) {
          await session.query('SAVEPOINT pgagent_count');
          try {
            const result = await session.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table.from}`);
            counted.set(table.key, Number(result.rows[0]?.n ?? 0));
            await session.query('RELEASE SAVEPOINT pgagent_count');
          } catch {
            await session.query('ROLLBACK TO SAVEPOINT pgagent_count'); // over budget: the estimate stays
          }
        }
      } finally {
        await session.query('ROLLBACK');
      }
    })
    .catch(() => undefined);
  return counted;
}
