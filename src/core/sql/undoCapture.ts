/**
 * Before-images for the undo script (SPEC §5.6). Inside the execution's transaction, a temporary
 * AFTER ROW trigger on every table the preview saw change logs each row's old and new value; the
 * triggers are dropped before COMMIT, so nothing of ours outlives the transaction. The log then
 * becomes a reverse script: inserted rows deleted, updated rows restored, deleted rows re-inserted,
 * in an order that respects foreign keys.
 */
import type { DbSession } from '../db/db';
import { quoteQualified } from './tableEffects';

const TRIGGER = 'pgagent_undo_capture';

export interface UndoCapture {
  /** Tables on which capture could not be installed (no TRIGGER privilege, a view, ...), with why. */
  skipped: { table: string; reason: string }[];
  /** Reads the log and builds the undo script; call before COMMIT. */
  buildScript(): Promise<UndoScript>;
  /** Drops the triggers; call before COMMIT. */
  remove(): Promise<void>;
}

export interface UndoScript {
  sql: string;
  /** Rows the script puts back (inserted rows removed + updated restored + deleted re-inserted). */
  rows: number;
  warnings: string[];
}

export async function installUndoCapture(session: DbSession, tables: readonly string[]): Promise<UndoCapture> {
  await session.query(`CREATE TEMP TABLE IF NOT EXISTS pgagent_undo_log (
      seq bigserial, relid oid, op text, old_row jsonb, new_row jsonb) ON COMMIT DROP`);
  await session.query(`CREATE OR REPLACE FUNCTION pg_temp.pgagent_undo_capture() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      INSERT INTO pgagent_undo_log (relid, op, old_row, new_row) VALUES (TG_RELID, TG_OP,
        CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END, CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END);
      RETURN NULL;
    END $fn$`);
  const installed: string[] = [];
  const skipped: UndoCapture['skipped'] = [];
  for (const table of tables) {
    const quoted = quoteQualified(table);
    await session.query('SAVEPOINT pgagent_capture');
    try {
      await session.query(
        `CREATE TRIGGER ${TRIGGER} AFTER INSERT OR UPDATE OR DELETE ON ${quoted} FOR EACH ROW EXECUTE FUNCTION pg_temp.pgagent_undo_capture()`,
      );
      await session.query('RELEASE SAVEPOINT pgagent_capture');
      installed.push(quoted);
    } catch (error) {
      await session.query('ROLLBACK TO SAVEPOINT pgagent_capture');
      skipped.push({ table, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return {
    skipped,
    buildScript: () => buildScript(session, skipped),
    async remove() {
      for (const quoted of installed) await session.query(`DROP TRIGGER IF EXISTS ${TRIGGER} ON ${quoted}`);
    },
  };
}

export const UNDO_CAPTURE_TRIGGER = TRIGGER;

interface LogRow {
  table: string;
  relid: number;
  op: 'INSERT' | 'UPDATE' | 'DELETE';
  old_row: Record<string, unknown> | null;
  new_row: Record<string, unknown> | null;
}

interface TableShape {
  relid: number;
  table: string;
  pk: string[];
  /** Columns that can be written (not generated). */
  columns: string[];
  /** Tables this one references (parents). */
  parents: number[];
}

async function buildScript(session: DbSession, skipped: UndoCapture['skipped']): Promise<UndoScript> {
  const log = await session.query<LogRow>(
    `SELECT relid::regclass::text AS table, relid::int8::float8 AS relid, op, old_row, new_row FROM pgagent_undo_log ORDER BY seq`,
  );
  const warnings = skipped.map((s) => `No undo for ${s.table}: ${s.reason}`);
  const rows = log.rows.map((r) => ({
    ...r,
    old_row: typeof r.old_row === 'string' ? (JSON.parse(r.old_row) as Record<string, unknown>) : r.old_row,
    new_row: typeof r.new_row === 'string' ? (JSON.parse(r.new_row) as Record<string, unknown>) : r.new_row,
  }));
  if (rows.length === 0) return { sql: '-- Nothing to undo: the write changed no rows.\n', rows: 0, warnings };
  const shapes = await tableShapes(session, [...new Set(rows.map((r) => r.relid))]);
  const parentsFirst = topologicalOrder(shapes);
  const statements: string[] = [];
  let restored = 0;
  const group = (op: LogRow['op'], shape: TableShape) => rows.filter((r) => r.op === op && r.relid === shape.relid);

  // 1. Remove inserted rows, children before parents.
  for (const shape of [...parentsFirst].reverse()) {
    const inserted = group('INSERT', shape).map((r) => r.new_row);
    if (inserted.length === 0) continue;
    if (shape.pk.length === 0) {
      warnings.push(
        `${shape.table} has no primary key: its ${inserted.length} inserted rows are not in the undo script.`,
      );
      continue;
    }
    statements.push(
      `DELETE FROM ${shape.table} WHERE (${cols(shape.pk)}) IN (SELECT ${cols(shape.pk)} FROM jsonb_populate_recordset(NULL::${shape.table}, ${jsonLiteral(inserted)}));`,
    );
    restored += inserted.length;
  }
  // 2. Restore updated rows to their old values (matched on the key they have now).
  for (const shape of parentsFirst) {
    const updated = group('UPDATE', shape);
    if (updated.length === 0) continue;
    if (shape.pk.length === 0) {
      warnings.push(
        `${shape.table} has no primary key: its ${updated.length} updated rows are not in the undo script.`,
      );
      continue;
    }
    for (const u of updated) {
      const keyNow = JSON.stringify(shape.pk.map((k) => u.new_row?.[k]));
      const keyBefore = JSON.stringify(shape.pk.map((k) => u.old_row?.[k]));
      if (keyNow !== keyBefore)
        warnings.push(`A row of ${shape.table} changed its primary key; it is restored by its new key.`);
    }
    const pairs = updated.map((u) => ({
      key: Object.fromEntries(shape.pk.map((k) => [k, u.new_row?.[k]])),
      old: u.old_row,
    }));
    statements.push(
      `UPDATE ${shape.table} AS t SET (${cols(shape.columns)}) = (SELECT ${shape.columns.map((c) => `o.${quoteIdent(c)}`).join(', ')} FROM jsonb_populate_record(NULL::${shape.table}, p.value->'old') AS o)\n` +
        `  FROM jsonb_array_elements(${jsonLiteral(pairs)}) AS p\n` +
        `  WHERE (${shape.pk.map((k) => `t.${quoteIdent(k)}`).join(', ')}) = (SELECT ${shape.pk.map((k) => `k.${quoteIdent(k)}`).join(', ')} FROM jsonb_populate_record(NULL::${shape.table}, p.value->'key') AS k);`,
    );
    restored += updated.length;
  }
  // 3. Re-insert deleted rows, parents before children.
  for (const shape of parentsFirst) {
    const deleted = group('DELETE', shape).map((r) => r.old_row);
    if (deleted.length === 0) continue;
    statements.push(
      `INSERT INTO ${shape.table} (${cols(shape.columns)}) OVERRIDING SYSTEM VALUE\n  SELECT ${cols(shape.columns)} FROM jsonb_populate_recordset(NULL::${shape.table}, ${jsonLiteral(deleted)});`,
    );
    restored += deleted.length;
  }
  const header = `-- Undo script: puts back ${restored} row(s) changed by the write, from before-images taken during its transaction.\n-- Run it through Postgres Agent: it is reviewed and approved like any other write.\n`;
  return { sql: `${header}${statements.join('\n')}\n`, rows: restored, warnings };
}

async function tableShapes(session: DbSession, relids: number[]): Promise<TableShape[]> {
  const result = await session.query<{
    relid: number;
    table: string;
    pk: string[] | null;
    columns: string[];
    parents: number[] | null;
  }>(
    `SELECT c.oid::int8::float8 AS relid, c.oid::regclass::text AS table,
       (SELECT array_agg(a.attname::text ORDER BY array_position(i.indkey::int2[], a.attnum))
          FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
         WHERE i.indrelid = c.oid AND i.indisprimary) AS pk,
       (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '') AS columns,
       (SELECT array_agg(DISTINCT con.confrelid::int8::float8) FROM pg_constraint con
         WHERE con.conrelid = c.oid AND con.contype = 'f' AND con.confrelid <> c.oid) AS parents
     FROM pg_class c WHERE c.oid = ANY($1::float8[]::int8[]::oid[])`,
    [relids],
  );
  return result.rows.map((r) => ({
    relid: r.relid,
    table: r.table,
    pk: r.pk ?? [],
    columns: r.columns,
    parents: r.parents ?? [],
  }));
}

/** Referenced tables before the tables that reference them (cycles broken arbitrarily). */
function topologicalOrder(shapes: TableShape[]): TableShape[] {
  const byRelid = new Map(shapes.map((s) => [s.relid, s]));
  const done = new Set<number>();
  const ordered: TableShape[] = [];
  const visit = (shape: TableShape, path: Set<number>) => {
    if (done.has(shape.relid) || path.has(shape.relid)) return;
    path.add(shape.relid);
    for (const parent of shape.parents) {
      const p = byRelid.get(parent);
      if (p) visit(p, path);
    }
    done.add(shape.relid);
    ordered.push(shape);
  };
  for (const shape of [...shapes].sort((a, b) => a.table.localeCompare(b.table))) visit(shape, new Set());
  return ordered;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function cols(names: readonly string[]): string {
  return names.map(quoteIdent).join(', ');
}

function jsonLiteral(value: unknown): string {
  return `'${JSON.stringify(value).replace(/'/g, "''")}'::jsonb`;
}
