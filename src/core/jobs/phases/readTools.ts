/**
 * The agent's read-only database tools (both phases): list and describe tables, sample rows with a cap,
 * count, run a read, EXPLAIN. Every SQL goes through the parser's classification and runs READ ONLY;
 * anything that is not a read is answered with an error, never run. Database content reaches the model
 * as untrusted data.
 */
import { untrustedData } from '../../ask/modelCall';
import { findTablesText } from '../../ask/schemaLinking';
import type { Db } from '../../db/db';
import { AgentError } from '../../platform/errors';
import { checkSql, reachRefusal } from '../../sql/reach/checkSql';
import { blockingEffects } from '../../sql/reach/reachVerdicts';
import type { ReadResult } from '../../sql/runRead';
import { explainReadOnly } from '../../sql/explainPlan';
import { runRead } from '../../sql/runRead';
import type { SafetySettings } from '../../sql/safetySettings';
import type { SchemaSnapshot, TableInfo } from '../../../shared/schema';

export interface ReadToolContext {
  db: Db;
  settings: SafetySettings;
  loadSnapshot: () => Promise<SchemaSnapshot>;
  /** Told of each read cut at the row cap (the job remembers it for its later writes, issue 25). */
  onTruncated?: (rows: number, tables: string[]) => void;
}

/** Rows a tool shows the model at most (the row cap of reads still applies below it). */
export const TOOL_ROW_CAP = 200;
export const SAMPLE_ROW_CAP = 20;

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** "schema.name" or "name" (public first, then any schema) to the table; a clear error lists near names. */
export async function findTable(context: ReadToolContext, table: string): Promise<TableInfo> {
  return tableIn(await context.loadSnapshot(), table);
}

function tableIn(snapshot: SchemaSnapshot, table: string): TableInfo {
  const wanted = table.trim().replaceAll('"', '').toLowerCase();
  const dot = wanted.indexOf('.');
  const found =
    dot > 0
      ? snapshot.tables.find((t) => `${t.schema}.${t.name}`.toLowerCase() === wanted)
      : (snapshot.tables.find((t) => t.schema === 'public' && t.name.toLowerCase() === wanted) ??
        snapshot.tables.find((t) => t.name.toLowerCase() === wanted));
  if (found) return found;
  const near = snapshot.tables
    .filter((t) => t.name.toLowerCase().includes(wanted.slice(dot + 1, dot + 5)))
    .slice(0, 8)
    .map((t) => `${t.schema}.${t.name}`);
  throw new AgentError(
    'BAD_INPUT',
    `There is no table "${table}".${near.length > 0 ? ` Similar: ${near.join(', ')}.` : ''}`,
    'Call find_tables with a few words, or list_tables for the names.',
  );
}

export async function listTables(context: ReadToolContext): Promise<unknown> {
  const snapshot = await context.loadSnapshot();
  return {
    database: snapshot.database,
    tables: snapshot.tables.slice(0, 500).map((t) => ({
      table: `${t.schema}.${t.name}`,
      kind: t.kind,
      rowEstimate: t.rowEstimate,
      columns: t.columns.length,
      ...(t.comment ? { comment: t.comment } : {}),
    })),
    ...(snapshot.tables.length > 500 ? { note: `${snapshot.tables.length - 500} more tables not listed` } : {}),
  };
}

export async function describeTable(context: ReadToolContext, table: string): Promise<unknown> {
  // One read of the (cached) schema per tool call.
  return describedTable(tableIn(await context.loadSnapshot(), table));
}

/** describe_table's answer for one table: the foreign keys pointing to it come with it (read with the table). */
export function describedTable(t: TableInfo): unknown {
  const referencedBy = (t.referencedBy ?? []).map((fk) => ({
    table: `${fk.schema}.${fk.table}`,
    columns: fk.columns,
    onDelete: fk.onDelete,
  }));
  return {
    table: `${t.schema}.${t.name}`,
    kind: t.kind,
    comment: t.comment,
    rowEstimate: t.rowEstimate,
    columns: t.columns.map((c) => ({
      name: c.name,
      type: c.type,
      nullable: c.nullable,
      default: c.default,
      ...(c.comment ? { comment: c.comment } : {}),
      ...(c.allowedValues ? { allowedValues: c.allowedValues } : {}),
    })),
    ...(t.partitionOf ? { partitionOf: `${t.partitionOf.schema}.${t.partitionOf.table}` } : {}),
    primaryKey: t.primaryKey,
    foreignKeys: t.foreignKeys.map((fk) => ({
      columns: fk.columns,
      references: `${fk.references.schema}.${fk.references.table}(${fk.references.columns.join(', ')})`,
      onDelete: fk.onDelete,
    })),
    referencedBy,
    indexes: t.indexes.map((i) => i.definition),
    triggers: t.triggers.map((tr) => tr.definition),
  };
}

/** find_tables: the best matches of a few words, ranked as the ask's schema context ranks them. */
export async function findTables(context: ReadToolContext, words: string): Promise<string> {
  const found = findTablesText(await context.loadSnapshot(), words);
  return found === '' ? `No table matches "${words}". list_tables shows the names.` : found;
}

export async function sampleRows(context: ReadToolContext, table: string, limit: number | undefined): Promise<string> {
  const t = await findTable(context, table);
  const n = Math.max(1, Math.min(SAMPLE_ROW_CAP, Math.floor(limit ?? 5)));
  const result = await runRead(
    context.db,
    `SELECT * FROM ${quoteIdent(t.schema)}.${quoteIdent(t.name)} LIMIT ${n}`,
    true,
    { ...context.settings, maxRows: n },
  );
  if (result.truncated) context.onTruncated?.(result.rowCount, [`${t.schema}.${t.name}`]);
  return rowsForModel(result);
}

export async function countRows(context: ReadToolContext, table: string, where: string | undefined): Promise<string> {
  const t = await findTable(context, table);
  const filter = where?.trim() ? ` WHERE (${where.trim()})` : '';
  return runReadSql(context, `SELECT count(*) AS count FROM ${quoteIdent(t.schema)}.${quoteIdent(t.name)}${filter}`);
}

/** One read, classified by the parser first: anything else is refused with the parser's reasons. */
export async function runReadSql(context: ReadToolContext, sql: string): Promise<string> {
  const classification = await checkSql(context.db, sql);
  const statement = classification.statements[0];
  if (classification.decision !== 'run' || !statement) {
    throw new AgentError(
      'SQL_REFUSED',
      `Not run: this is not a read (${classification.class}: ${classification.reasons.join('; ') || 'not on the read allow-list'}).`,
      'Read tools only run reads. Put writes into todos (strategic phase) or run them with run_sql in the tactical phase, where a person approves them.',
    );
  }
  const result = await runRead(context.db, statement, statement.kind === 'SelectStmt', {
    ...context.settings,
    maxRows: Math.min(context.settings.maxRows, TOOL_ROW_CAP),
  });
  if (result.truncated) context.onTruncated?.(result.rowCount, statement.tables);
  return rowsForModel(result);
}

/** The planner's plan (EXPLAIN without ANALYZE, inside READ ONLY): of a read, or of one data write that is not run. */
export async function explainSql(context: ReadToolContext, sql: string): Promise<string> {
  const classification = await checkSql(context.db, sql);
  const statement = classification.statements[0];
  if (classification.statements.length !== 1 || !statement)
    throw new AgentError('BAD_INPUT', 'explain_sql takes exactly one statement.');
  if (!['SelectStmt', 'InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt'].includes(statement.kind)) {
    throw new AgentError(
      'BAD_INPUT',
      `explain_sql explains SELECT, INSERT, UPDATE, DELETE or MERGE, not ${statement.kind}.`,
      'Pass the statement itself, without EXPLAIN.',
    );
  }
  if (statement.sideEffects.length > 0) {
    throw new AgentError(
      'SQL_REFUSED',
      `Not explained: the statement calls ${statement.sideEffects.join(', ')}, whose effects survive a rollback.`,
    );
  }
  const blocking = blockingEffects(statement);
  if (blocking.length > 0) throw reachRefusal(blocking, 'explain');
  return explainReadOnly(context.db, statement.sql, 'text', context.settings);
}

/** Rows as compact JSON lines inside the untrusted-data delimiters, with the count and truncation stated outside them. */
export function rowsForModel(result: ReadResult): string {
  const header = result.fields.map((f) => f.name);
  const lines = [JSON.stringify(header), ...result.rows.map((row) => JSON.stringify(row))];
  return `${result.rowCount} row(s)${result.truncated ? ' (truncated at the row cap)' : ''}, columns then rows:\n${untrustedData(lines.join('\n'))}`;
}
