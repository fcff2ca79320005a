/**
 * Two findings only a job can make about a write it proposes (issue 25), from what the job did before:
 * - an earlier read of the job was cut at the row cap, so the write may be planned from part of the data;
 * - the write's WHERE uses a column an earlier executed write of the job SET (the classic "UPDATE … SET
 *   status = 'done' … then DELETE … WHERE status = 'done'" that now matches rows it never meant).
 * They go into the impact as lint findings; the impact lifts the risk one level for them (sweepingWrites.ts).
 */
import type { LintFindingView } from '../../../shared/impactReport';
import { parseSql } from '../../sql/parse';
import type { Rec } from '../../sql/parseTree';
import { arr, rangeVarName, rec, str, walkObjects } from '../../sql/parseTree';
import { COLUMN_JUST_SET_RULE, TRUNCATED_READ_RULE } from '../../sql/sweepingWrites';

/** A read of this job whose result was cut at the row cap: the rows it showed, the tables it read. */
export interface TruncatedRead {
  rows: number;
  tables: string[];
}

/** A column an executed write of this job SET, and the step (sql file) that set it. */
export interface ColumnSet {
  table: string;
  column: string;
  step: string;
}

/** The findings for `sql` (a write about to be held), given what the job read and wrote before. */
export function jobWriteFindings(
  sql: string,
  truncatedReads: readonly TruncatedRead[],
  columnsSet: readonly ColumnSet[],
): LintFindingView[] {
  const targets = writeTargets(sql);
  if (targets.length === 0) return [];
  const findings: LintFindingView[] = [];
  const cut = truncatedReads.filter(
    (r) => r.tables.length === 0 || r.tables.some((t) => targets.some((w) => sameTable(t, w.table))),
  );
  if (cut.length > 0) {
    const rows = Math.min(...cut.map((r) => r.rows));
    const tables = [...new Set(cut.flatMap((r) => r.tables))];
    findings.push({
      rule: TRUNCATED_READ_RULE,
      severity: 'warning',
      message: `may be planned from part of the data: an earlier read of this job${tables.length > 0 ? ` (of ${tables.join(', ')})` : ''} returned only the first ${rows.toLocaleString('en-US')} rows (cut at the row cap)`,
      advice:
        'Check the write against all the rows it touches (count_rows with the same WHERE, or a narrower read), not only the rows that were shown.',
    });
  }
  for (const target of targets) {
    for (const column of target.whereColumns) {
      const earlier = columnsSet.find((c) => c.column === column && sameTable(c.table, target.table));
      if (!earlier) continue;
      findings.push({
        rule: COLUMN_JUST_SET_RULE,
        severity: 'warning',
        message: `filters on ${target.table}.${column}, which an earlier step of this job (${earlier.step}) just SET: its WHERE may now match rows that step changed`,
        advice: `Check which rows the WHERE matches after ${earlier.step}; filter on a column that step did not change, or on the keys of the rows you mean.`,
      });
    }
  }
  return findings;
}

/** The columns each UPDATE of `sql` SETs (for the job to remember once it ran). Unparsable SQL: none. */
export function columnsSetBy(sql: string, step: string): ColumnSet[] {
  return statementsOf(sql).flatMap((tree) => {
    const update = rec(tree, 'UpdateStmt');
    const table = rangeVarName(rec(update, 'relation'));
    if (!update || table === undefined) return [];
    const columns = arr(update, 'targetList')
      .map((t) => str(rec(t, 'ResTarget'), 'name'))
      .filter((c): c is string => c !== undefined);
    return [...new Set(columns)].map((column) => ({ table, column, step }));
  });
}

function writeTargets(sql: string): { table: string; whereColumns: string[] }[] {
  return statementsOf(sql).flatMap((tree) => {
    const stmt = rec(tree, 'UpdateStmt') ?? rec(tree, 'DeleteStmt');
    const table = rangeVarName(rec(stmt, 'relation'));
    if (!stmt || table === undefined) return [];
    return [{ table, whereColumns: columnRefs(stmt.whereClause) }];
  });
}

/** The last name of every column reference under `node` ("t.status" and "status" both give "status"). */
function columnRefs(node: unknown): string[] {
  const found = new Set<string>();
  walkObjects(node, (value: Rec) => {
    const ref = rec(value, 'ColumnRef');
    if (ref) {
      const last = arr(ref, 'fields').at(-1);
      const name = str(rec(last, 'String'), 'sval');
      if (name !== undefined) found.add(name);
      return [];
    }
    return Object.values(value);
  });
  return [...found];
}

function statementsOf(sql: string): unknown[] {
  try {
    return parseSql(sql).statements.map((s) => s.tree);
  } catch {
    return [];
  }
}

/** "public.t" and "t" are the same table; two different schemas are not. */
function sameTable(a: string, b: string): boolean {
  const [sa, na] = split(a);
  const [sb, nb] = split(b);
  return na === nb && (sa === undefined || sb === undefined || sa === sb);
}

function split(name: string): [string | undefined, string] {
  const clean = name.replaceAll('"', '').toLowerCase();
  const dot = clean.lastIndexOf('.');
  return dot < 0 ? [undefined, clean] : [clean.slice(0, dot), clean.slice(dot + 1)];
}
