/**
 * What the undo of a DROP TABLE brings back, as its impact shows it: the restore SQL (runWithRecovery.ts) moves the
 * quarantined table back whole (`ALTER TABLE "pgagent_q_…"."t" SET SCHEMA "public"`), so no row is inserted and the
 * preview's row counts cannot show it. Its rows are counted where cheap (the DROP's own budget, droppedRows.ts) or
 * given as the planner's estimate, said as one. Read-only.
 */
import type { Db } from '../../db/db';
import type { RestoreView } from '../../../shared/impactReport';
import { describeSize } from '../../../shared/lockPhrases';
import { countRowsBriefly } from '../ddl/droppedRows';
import type { DdlChange } from '../ddl/ddlPlan';
import { quoteQualified } from '../tableEffects';
import { QUARANTINE_TABLE_SCHEMA_PREFIX, quoteIdent } from './quarantineStore';

const IDENT = '"((?:[^"]|"")+)"';
const MOVE_BACK = new RegExp(`^\\s*ALTER TABLE ${IDENT}\\.${IDENT} SET SCHEMA ${IDENT}\\s*;?\\s*$`, 'i');
const unquote = (name: string) => name.replace(/""/g, '"');

interface MovedBack {
  /** The quarantine schema it leaves, the table's name, where it goes. */
  from: string;
  relname: string;
  to: string;
}

/** The statements that move a table out of the quarantine (as the restore SQL writes them). */
function movedBack(statements: readonly string[]): MovedBack[] {
  return statements.flatMap((sql) => {
    const m = MOVE_BACK.exec(sql);
    const [from, relname, to] = [m?.[1], m?.[2], m?.[3]].map((x) => (x === undefined ? undefined : unquote(x)));
    return from?.startsWith(QUARANTINE_TABLE_SCHEMA_PREFIX) && relname !== undefined && to !== undefined
      ? [{ from, relname, to }]
      : [];
  });
}

/** The tables `statements` move back out of the quarantine, with their rows and size (as they are now). */
export async function planRestores(db: Db, statements: readonly string[]): Promise<RestoreView[]> {
  const moves = movedBack(statements);
  if (moves.length === 0) return [];
  const quoted = (m: MovedBack) => `${quoteIdent(m.from)}.${quoteIdent(m.relname)}`;
  const facts = await db.withSession(async (session) => {
    const found = new Map<string, { rows: number | null; bytes: number }>();
    for (const m of moves) {
      const result = await session.query<{ rows: number | null; bytes: number }>(
        `SELECT CASE WHEN c.reltuples < 0 THEN NULL ELSE c.reltuples::float8 END AS rows,
                pg_total_relation_size(c.oid)::float8 AS bytes
         FROM pg_class c WHERE c.oid = to_regclass($1)`,
        [quoted(m)],
      );
      const row = result.rows[0];
      if (row) found.set(quoted(m), row);
    }
    return found;
  });
  const counted = await countRowsBriefly(
    db,
    moves.filter((m) => facts.has(quoted(m))).map((m) => ({ key: quoted(m), from: quoted(m) })),
  );
  return moves.flatMap((m): RestoreView[] => {
    const fact = facts.get(quoted(m));
    if (!fact) return []; // not in the quarantine (any more): the statement fails, and the preview says so
    const exact = counted.get(quoted(m));
    const table = `${m.to}.${m.relname}`;
    const rows = exact ?? (fact.rows === null ? null : Math.round(fact.rows));
    const rowsExact = exact !== undefined;
    return [
      {
        table,
        rows,
        rowsExact,
        bytes: fact.bytes,
        summary: `Restores: ${table} comes back out of the quarantine whole, with its ${describeSize(rows, fact.bytes, rowsExact)} (indexes, constraints and triggers with it).`,
      },
    ];
  });
}

/** Rows a restore brings back, for a header or a result line: "125 rows" or "≈ 2.1M rows"; null when unknown. */
export function restoredRows(restores: readonly RestoreView[]): { rows: number; exact: boolean } | null {
  if (restores.length === 0 || restores.some((r) => r.rows === null)) return null;
  return {
    rows: restores.reduce((sum, r) => sum + (r.rows ?? 0), 0),
    exact: restores.every((r) => r.rowsExact),
  };
}

export interface RestoredTable {
  table: string;
  /** Counted now, in its place; the review's number (`exact` false) when it cannot be counted in time. */
  rows: number | null;
  exact: boolean;
}

/** After a restore ran: each table it brought back, with its rows counted where it is now. */
export async function restoredNow(db: Db, restores: readonly RestoreView[]): Promise<RestoredTable[]> {
  const counted = await countRowsBriefly(
    db,
    restores.map((r) => ({ key: r.table, from: quoteQualified(r.table) })),
  );
  return restores.map((r) => {
    const now = counted.get(r.table);
    return now !== undefined
      ? { table: r.table, rows: now, exact: true }
      : { table: r.table, rows: r.rows, exact: false };
  });
}

/** "public.items is back with its 125 rows" (or "≈ 2.1M rows (estimate)"). */
export function restoredPhrase(t: RestoredTable): string {
  if (t.rows === null) return `${t.table} is back`;
  return `${t.table} is back with its ${t.exact ? t.rows.toLocaleString('en-US') : `≈ ${t.rows.toLocaleString('en-US')}`} row${t.rows === 1 ? '' : 's'}${t.exact ? '' : ' (estimate)'}`;
}

/**
 * An undo's `DROP SCHEMA "pgagent_q_…"` of the quarantine schema it has just emptied: without CASCADE PostgreSQL
 * drops it only when empty, so it destroys nothing and does not make the undo CRITICAL (impact.ts).
 */
export function dropsEmptiedQuarantine(changes: readonly DdlChange[]): boolean {
  return (
    changes.length === 1 &&
    changes.every(
      (c) =>
        c.kind === 'drop' &&
        c.objectType === 'OBJECT_SCHEMA' &&
        !c.cascade &&
        c.objects.every((o) => o.startsWith(QUARANTINE_TABLE_SCHEMA_PREFIX)),
    )
  );
}
