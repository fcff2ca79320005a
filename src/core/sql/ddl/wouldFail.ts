/**
 * Would-fail predicted without running the statement (SPEC §5.4a): one read-only query per change, in a
 * READ ONLY transaction that takes nothing stronger than ACCESS SHARE (which only ACCESS EXCLUSIVE waits
 * for) and stops at the first row that proves the failure. Each query is built from the statement's own
 * parsed parts and classified again: only what the classifier calls a plain read ever runs.
 */
import type { DbSession } from '../../db/db';
import { DbQueryError } from '../../db/dbErrors';
import { classifySql } from '../classify';
import { quoteQualified } from '../tableEffects';
import type { DdlChange } from './ddlPlan';

export interface Prediction {
  wouldFail: null | { code: string; message: string };
  /** Checks that could not be made (time limit, an expression the classifier would not run). */
  warnings: string[];
}

interface Check {
  sql: string;
  code: string;
  message: string;
}

export async function predictFailure(
  session: DbSession,
  changes: readonly DdlChange[],
  timeoutMs: number,
): Promise<Prediction> {
  const resolved: DdlChange[] = [];
  for (const change of changes) resolved.push(await withReferencedKey(session, change));
  const checks = resolved.flatMap(checkFor);
  if (checks.length === 0) return { wouldFail: null, warnings: [] };
  const warnings: string[] = [];
  await session.query('BEGIN READ ONLY');
  try {
    await session.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.round(timeoutMs))}`);
    // Never queue behind a session holding ACCESS EXCLUSIVE (and so make others queue behind us).
    await session.query(`SET LOCAL lock_timeout = 50`);
    for (const check of checks) {
      if (!isPlainRead(check.sql)) {
        warnings.push(
          `Could not check beforehand whether it would fail (${check.message.split(':')[0]}): the expression is not a plain read.`,
        );
        continue;
      }
      await session.query('SAVEPOINT pgagent_predict');
      try {
        const result = await session.query<{ hit: boolean }>(check.sql);
        await session.query('RELEASE SAVEPOINT pgagent_predict');
        if (result.rows[0]?.hit === true) return { wouldFail: { code: check.code, message: check.message }, warnings };
      } catch (error) {
        if (!(error instanceof DbQueryError)) throw error;
        await session.query('ROLLBACK TO SAVEPOINT pgagent_predict');
        warnings.push(
          `Could not check beforehand whether it would fail (${check.message.split(':')[0]}): ${error.message}.`,
        );
      }
    }
    return { wouldFail: null, warnings };
  } finally {
    await session.query('ROLLBACK');
  }
}

/** REFERENCES t without columns means t's primary key: read it from the catalog. */
async function withReferencedKey(session: DbSession, change: DdlChange): Promise<DdlChange> {
  if (change.kind !== 'addForeignKey' || change.refColumns.length > 0) return change;
  const result = await session.query<{ name: string }>(
    `SELECT a.attname AS name
     FROM pg_constraint c CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
     JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
     WHERE c.conrelid = to_regclass($1) AND c.contype = 'p' ORDER BY k.n`,
    [quoteQualified(change.refTable)],
  );
  return { ...change, refColumns: result.rows.map((r) => r.name) };
}

function isPlainRead(sql: string): boolean {
  try {
    return classifySql(sql).decision === 'run';
  } catch {
    // A check that does not even parse is not run; the caller says the check could not be made.
    return false;
  }
}

const q = (name: string): string => quoteQualified(name);
const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const bare = (table: string): string => table.split('.').pop() ?? table;

/** A unique key over `columns` would fail when two rows with no NULL key share it (what the unique index build meets). */
function duplicateKeyCheck(table: string, columns: readonly string[]): Check[] {
  if (columns.length === 0) return [];
  const cols = columns.map(ident).join(', ');
  const notNull = columns.map((c) => `${ident(c)} IS NOT NULL`).join(' AND ');
  return [
    {
      sql: `SELECT EXISTS (SELECT 1 FROM ${q(table)} WHERE ${notNull} GROUP BY ${cols} HAVING count(*) > 1) AS hit`,
      code: '23505',
      message: `could not create unique index on ${bare(table)} (${columns.join(', ')}): some rows have the same key`,
    },
  ];
}

function checkFor(change: DdlChange): Check[] {
  switch (change.kind) {
    case 'addColumn':
      if (!change.notNull || change.defaultSql !== null || change.generated || change.identity) return [];
      return [
        {
          sql: `SELECT EXISTS (SELECT 1 FROM ${q(change.table)}) AS hit`,
          code: '23502',
          message: `column "${change.column}" of relation "${bare(change.table)}" contains null values: the table has rows and the new NOT NULL column has no default`,
        },
      ];
    case 'setNotNull':
      return [
        {
          sql: `SELECT EXISTS (SELECT 1 FROM ${q(change.table)} WHERE ${ident(change.column)} IS NULL) AS hit`,
          code: '23502',
          message: `column "${change.column}" of relation "${bare(change.table)}" contains null values`,
        },
      ];
    case 'addCheck':
      if (change.notValid || change.exprSql === '') return [];
      return [
        {
          sql: `SELECT EXISTS (SELECT 1 FROM ${q(change.table)} WHERE NOT (${change.exprSql})) AS hit`,
          code: '23514',
          message: `check constraint ${change.name === null ? '' : `"${change.name}" `}of relation "${bare(change.table)}" is violated by some row: CHECK (${change.exprSql})`,
        },
      ];
    case 'addUnique':
      return change.usingIndex ? [] : duplicateKeyCheck(change.table, change.columns);
    case 'createIndex':
      return change.unique ? duplicateKeyCheck(change.table, change.columns) : [];
    case 'addForeignKey': {
      if (change.notValid || change.refColumns.length === 0 || change.refColumns.length !== change.columns.length)
        return [];
      const join = change.columns.map((c, i) => `r.${ident(change.refColumns[i] ?? c)} = t.${ident(c)}`).join(' AND ');
      const present = change.columns.map((c) => `t.${ident(c)} IS NOT NULL`).join(' AND ');
      return [
        {
          sql: `SELECT EXISTS (SELECT 1 FROM ${q(change.table)} t WHERE ${present} AND NOT EXISTS (SELECT 1 FROM ${q(change.refTable)} r WHERE ${join})) AS hit`,
          code: '23503',
          message: `insert or update on table "${bare(change.table)}" violates foreign key constraint${change.name === null ? '' : ` "${change.name}"`}: some rows reference a missing ${bare(change.refTable)}`,
        },
      ];
    }
    default:
      return [];
  }
}
