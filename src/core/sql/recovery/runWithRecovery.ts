/**
 * Runs an approved destructive statement with the way back its impact promised (issue 25), inside the
 * executing transaction, so the statement and its way back commit together or not at all:
 * DROP TABLE → the table moves to a quarantine schema of its own instead (views and other tables' foreign
 * keys that CASCADE would drop are dropped, and re-created by the restore); DROP COLUMN → the column's values
 * are copied keyed by the primary key, then the statement runs; TRUNCATE → the rows are copied, then it runs.
 * Each kept thing gets an entry with the SQL that puts it back (`pg-agent undo` holds that SQL for approval).
 */
import type { Ticket } from '../../approvals/ticket';
import type { DbSession } from '../../db/db';
import { AgentError } from '../../platform/errors';
import type { RecoveryView } from '../../../shared/impactReport';
import type { StatementClassification } from '../classification';
import type { DdlChange } from '../ddl/ddlPlan';
import { planStatement } from '../ddl/lockModel';
import { parseSql } from '../parse';
import { rec } from '../parseTree';
import {
  QUARANTINE_SCHEMA,
  QUARANTINE_TABLE_SCHEMA_PREFIX,
  ensureQuarantine,
  forgetEntrySql,
  quoteIdent,
  recordEntry,
} from './quarantineStore';
import type { RelationFacts } from './recoveryPlan';
import { relationFacts, truncatedWithCascade } from './recoveryPlan';

interface Context {
  session: DbSession;
  ticket: Ticket;
  statement: StatementClassification;
  index: number;
  view: RecoveryView;
}

/** Runs the statement its approved way: with the way back, or (way none) as written. */
export async function runWithRecovery(
  session: DbSession,
  ticket: Ticket,
  statement: StatementClassification,
  index: number,
  view: RecoveryView,
): Promise<void> {
  if (view.way === 'none') {
    await session.query(statement.sql);
    return;
  }
  const ctx: Context = { session, ticket, statement, index, view };
  const changes = planStatement(statement.sql).changes;
  const drop = changes.find((c) => c.kind === 'drop');
  if (view.way === 'quarantine' && drop?.kind === 'drop') return quarantineTables(ctx, drop);
  const columns = changes.filter((c): c is Extract<DdlChange, { kind: 'dropColumn' }> => c.kind === 'dropColumn');
  if (view.way === 'copy' && columns.length > 0) return copyColumns(ctx, columns);
  const truncate = changes.find((c) => c.kind === 'truncate');
  if (view.way === 'copy' && truncate?.kind === 'truncate') return copyRows(ctx, truncate);
  throw changedSinceApproval(ctx, 'the statement is not one the approved way back applies to');
}

/** The name a ticket's n-th kept thing gets (unique per ticket, statement and position; within 63 bytes). */
function keptName(ctx: Context, position: number, prefix = ''): string {
  return `${prefix}${ctx.ticket.id.slice(4)}_${ctx.index}_${position}`;
}

function changedSinceApproval(ctx: Context, why: string): AgentError {
  return new AgentError(
    'IMPACT_EXCEEDED',
    `Rolled back: the way back approved for statement ${ctx.index + 1} (${ctx.view.summary.slice(0, 80)}…) is no longer possible: ${why}. Nothing ran.`,
    'The database changed since the review. Look at the impact again (run the SQL again for a new ticket).',
  );
}

async function quarantineTables(ctx: Context, drop: Extract<DdlChange, { kind: 'drop' }>): Promise<void> {
  const { session } = ctx;
  const tables: RelationFacts[] = [];
  for (const name of drop.objects) {
    const f = await relationFacts(session, name);
    if (f) tables.push(f);
    else if (!missingOk(ctx.statement.sql)) return void (await session.query(ctx.statement.sql)); // PostgreSQL's own error
  }
  if (tables.length !== ctx.view.targets.length || tables.some((t) => !ctx.view.targets.includes(t.name))) {
    throw changedSinceApproval(
      ctx,
      `it would drop ${tables.map((t) => t.name).join(', ') || 'nothing'}, not ${ctx.view.targets.join(', ')}`,
    );
  }
  if (tables.some((t) => t.relkind !== 'r' || t.inherits))
    throw changedSinceApproval(ctx, 'a table became a partition or gained inheritance');
  await ensureQuarantine(session);
  for (const [position, table] of tables.entries()) {
    const dependents = await withCatalogSearchPath(session, () => dependentsOf(session, table.oid));
    // Without CASCADE, PostgreSQL refuses to drop a table others depend on: so does the statement, as written.
    if (!drop.cascade && (dependents.views.length > 0 || dependents.foreignKeys.length > 0))
      return void (await session.query(ctx.statement.sql));
    for (const view of [...dependents.views].reverse())
      await session.query(`DROP ${view.kind === 'm' ? 'MATERIALIZED VIEW' : 'VIEW'} IF EXISTS ${view.name}`);
    for (const fk of dependents.foreignKeys)
      await session.query(`ALTER TABLE ${fk.table} DROP CONSTRAINT ${quoteIdent(fk.name)}`);
    const schema = keptName(ctx, position, QUARANTINE_TABLE_SCHEMA_PREFIX);
    await session.query(`CREATE SCHEMA ${quoteIdent(schema)}`);
    await session.query(
      `ALTER TABLE ${quoteIdent(table.schema)}.${quoteIdent(table.relname)} SET SCHEMA ${quoteIdent(schema)}`,
    );
    const restore = [
      `ALTER TABLE ${quoteIdent(schema)}.${quoteIdent(table.relname)} SET SCHEMA ${quoteIdent(table.schema)};`,
      `DROP SCHEMA ${quoteIdent(schema)};`,
      ...dependents.views.map(
        (v) =>
          `CREATE ${v.kind === 'm' ? 'MATERIALIZED VIEW' : 'VIEW'} ${v.name} AS ${v.definition.trim().replace(/;$/, '')};`,
      ),
      ...dependents.foreignKeys.map(
        (fk) => `ALTER TABLE ${fk.table} ADD CONSTRAINT ${quoteIdent(fk.name)} ${fk.definition};`,
      ),
      forgetEntrySql(schema),
    ];
    await recordEntry(
      session,
      {
        id: schema,
        ticket: ctx.ticket.id,
        statement: ctx.index,
        position,
        kind: 'table',
        original: table.name,
        bytes: table.bytes,
        restoreSql: restore.join('\n'),
      },
      ctx.view.retentionDays,
    );
  }
}

async function copyColumns(ctx: Context, drops: readonly Extract<DdlChange, { kind: 'dropColumn' }>[]): Promise<void> {
  const { session } = ctx;
  await ensureQuarantine(session);
  for (const [position, drop] of drops.entries()) {
    const table = await relationFacts(session, drop.table);
    if (!table) return void (await session.query(ctx.statement.sql));
    const target = `${table.name}.${drop.column}`;
    if (!ctx.view.targets.includes(target))
      throw changedSinceApproval(ctx, `${target} was not part of the approved way back`);
    const column = await withCatalogSearchPath(session, () => columnDefinition(session, table.oid, drop.column));
    if (!column) return void (await session.query(ctx.statement.sql));
    if (column.key.length === 0 || column.key.includes(drop.column))
      throw changedSinceApproval(ctx, `${table.name} has no primary key apart from ${drop.column}`);
    const copy = keptName(ctx, position);
    const qualified = `${quoteIdent(table.schema)}.${quoteIdent(table.relname)}`;
    const key = column.key.map(quoteIdent);
    await session.query(
      `CREATE TABLE ${QUARANTINE_SCHEMA}.${quoteIdent(copy)} AS SELECT ${[...key, quoteIdent(drop.column)].join(', ')} FROM ${qualified}`,
    );
    const col = quoteIdent(drop.column);
    const restore = [
      `ALTER TABLE ${qualified} ADD COLUMN ${col} ${column.type};`,
      `UPDATE ${qualified} AS t SET ${col} = q.${col} FROM ${QUARANTINE_SCHEMA}.${quoteIdent(copy)} AS q WHERE (${key.map((k) => `t.${k}`).join(', ')}) = (${key.map((k) => `q.${k}`).join(', ')});`,
      ...(column.default !== null
        ? [`ALTER TABLE ${qualified} ALTER COLUMN ${col} SET DEFAULT ${column.default};`]
        : []),
      ...(column.notNull ? [`ALTER TABLE ${qualified} ALTER COLUMN ${col} SET NOT NULL;`] : []),
      ...column.indexes.map((d) => `${d};`),
      ...column.constraints.map(
        (c) => `ALTER TABLE ${qualified} ADD CONSTRAINT ${quoteIdent(c.name)} ${c.definition};`,
      ),
      `DROP TABLE ${QUARANTINE_SCHEMA}.${quoteIdent(copy)};`,
      forgetEntrySql(copy),
    ];
    const bytes = await tableBytes(session, `${QUARANTINE_SCHEMA}.${quoteIdent(copy)}`);
    await recordEntry(
      session,
      {
        id: copy,
        ticket: ctx.ticket.id,
        statement: ctx.index,
        position,
        kind: 'column',
        original: target,
        bytes,
        restoreSql: restore.join('\n'),
      },
      ctx.view.retentionDays,
    );
  }
  await session.query(ctx.statement.sql);
}

async function copyRows(ctx: Context, truncate: Extract<DdlChange, { kind: 'truncate' }>): Promise<void> {
  const { session } = ctx;
  const named: RelationFacts[] = [];
  for (const t of truncate.tables) {
    const f = await relationFacts(session, t);
    if (!f) return void (await session.query(ctx.statement.sql));
    named.push(f);
  }
  const oids = truncate.cascade
    ? await truncatedWithCascade(
        session,
        named.map((f) => f.oid),
      )
    : named.map((f) => f.oid);
  await ensureQuarantine(session);
  for (const [position, oid] of oids.entries()) {
    const table = await relationFacts(session, oid);
    if (!table) continue;
    if (!ctx.view.targets.includes(table.name)) throw changedSinceApproval(ctx, `it would also empty ${table.name}`);
    const copy = keptName(ctx, position);
    const qualified = `${quoteIdent(table.schema)}.${quoteIdent(table.relname)}`;
    // Generated columns are computed again on the way back; everything else is copied as it is.
    const cols = (
      await session.query<{ name: string }>(
        `SELECT attname AS name FROM pg_attribute WHERE attrelid = $1::text::int8::oid AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
        [String(oid)],
      )
    ).rows
      .map((r) => quoteIdent(r.name))
      .join(', ');
    await session.query(
      `CREATE TABLE ${QUARANTINE_SCHEMA}.${quoteIdent(copy)} AS SELECT ${cols} FROM ONLY ${qualified}`,
    );
    const restore = [
      `INSERT INTO ${qualified} (${cols}) OVERRIDING SYSTEM VALUE SELECT ${cols} FROM ${QUARANTINE_SCHEMA}.${quoteIdent(copy)};`,
      `DROP TABLE ${QUARANTINE_SCHEMA}.${quoteIdent(copy)};`,
      forgetEntrySql(copy),
    ];
    const bytes = await tableBytes(session, `${QUARANTINE_SCHEMA}.${quoteIdent(copy)}`);
    await recordEntry(
      session,
      {
        id: copy,
        ticket: ctx.ticket.id,
        statement: ctx.index,
        position,
        kind: 'rows',
        original: table.name,
        bytes,
        restoreSql: restore.join('\n'),
      },
      ctx.view.retentionDays,
    );
  }
  await session.query(ctx.statement.sql);
}

function missingOk(sql: string): boolean {
  const statement = parseSql(sql).statements[0];
  return rec(statement?.tree, 'DropStmt')?.missing_ok === true;
}

async function tableBytes(session: DbSession, qualified: string): Promise<number> {
  const result = await session.query<{ bytes: number }>(`SELECT pg_table_size(to_regclass($1))::float8 AS bytes`, [
    qualified,
  ]);
  return result.rows[0]?.bytes ?? 0;
}

/**
 * Runs `work` with search_path = pg_catalog, so the definitions PostgreSQL prints (views, constraints,
 * indexes, types, defaults) name every object with its schema and mean the same wherever they run later.
 */
async function withCatalogSearchPath<T>(session: DbSession, work: () => Promise<T>): Promise<T> {
  const before =
    (await session.query<{ path: string }>(`SELECT current_setting('search_path') AS path`)).rows[0]?.path ??
    '"$user", public';
  await session.query(`SELECT set_config('search_path', 'pg_catalog', true)`);
  try {
    return await work();
  } finally {
    await session.query(`SELECT set_config('search_path', $1, true)`, [before]);
  }
}

interface Dependents {
  /** Views and materialized views on the table, transitively, those nearest the table first. */
  views: { name: string; kind: string; definition: string }[];
  /** Foreign keys of other tables that reference it. */
  foreignKeys: { table: string; name: string; definition: string }[];
}

async function dependentsOf(session: DbSession, oid: number): Promise<Dependents> {
  const views = await session.query<{ name: string; kind: string; definition: string }>(
    `WITH RECURSIVE deps(oid, depth) AS (
       SELECT r.ev_class, 1 FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
       WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass AND d.refobjid = $1::text::int8::oid AND r.ev_class <> d.refobjid
       UNION
       SELECT r.ev_class, deps.depth + 1 FROM deps JOIN pg_depend d ON d.refobjid = deps.oid AND d.refclassid = 'pg_class'::regclass AND d.classid = 'pg_rewrite'::regclass
       JOIN pg_rewrite r ON r.oid = d.objid WHERE r.ev_class <> deps.oid AND deps.depth < 50
     )
     SELECT format('%I.%I', n.nspname, c.relname) AS name, c.relkind::text AS kind, pg_get_viewdef(c.oid) AS definition
     FROM deps JOIN pg_class c ON c.oid = deps.oid JOIN pg_namespace n ON n.oid = c.relnamespace
     GROUP BY c.oid, n.nspname, c.relname, c.relkind ORDER BY max(deps.depth), 1`,
    [String(oid)],
  );
  const foreignKeys = await session.query<{ table: string; name: string; definition: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS table, k.conname AS name, pg_get_constraintdef(k.oid) AS definition
     FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE k.contype = 'f' AND k.confrelid = $1::text::int8::oid AND k.conrelid <> k.confrelid ORDER BY 1, 2`,
    [String(oid)],
  );
  return { views: views.rows, foreignKeys: foreignKeys.rows };
}

interface ColumnDefinition {
  type: string;
  default: string | null;
  notNull: boolean;
  /** The primary key's columns. */
  key: string[];
  /** CREATE INDEX statements of indexes on the column that no constraint owns. */
  indexes: string[];
  /** CHECK, UNIQUE, FOREIGN KEY and EXCLUDE constraints on the column. */
  constraints: { name: string; definition: string }[];
}

async function columnDefinition(
  session: DbSession,
  oid: number,
  column: string,
): Promise<ColumnDefinition | undefined> {
  const result = await session.query<{ type: string; def: string | null; notnull: boolean; attnum: number }>(
    `SELECT format_type(a.atttypid, a.atttypmod) AS type, pg_get_expr(d.adbin, d.adrelid) AS def, a.attnotnull AS notnull, a.attnum
     FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = $1::text::int8::oid AND a.attname = $2 AND NOT a.attisdropped`,
    [String(oid), column],
  );
  const c = result.rows[0];
  if (!c) return undefined;
  const key = await session.query<{ name: string }>(
    `SELECT a.attname AS name FROM pg_constraint k JOIN LATERAL unnest(k.conkey) WITH ORDINALITY AS u(attnum, n) ON true
     JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.attnum
     WHERE k.conrelid = $1::text::int8::oid AND k.contype = 'p' ORDER BY u.n`,
    [String(oid)],
  );
  const indexes = await session.query<{ def: string }>(
    `SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
     WHERE i.indrelid = $1::text::int8::oid AND $2::int2 = ANY(i.indkey::int2[])
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid)
     ORDER BY 1`,
    [String(oid), c.attnum],
  );
  const constraints = await session.query<{ name: string; definition: string }>(
    `SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
     WHERE conrelid = $1::text::int8::oid AND contype IN ('c', 'u', 'f', 'x') AND $2::int2 = ANY(conkey) ORDER BY 1`,
    [String(oid), c.attnum],
  );
  return {
    type: c.type,
    default: c.def,
    notNull: c.notnull,
    key: key.rows.map((r) => r.name),
    indexes: indexes.rows.map((r) => r.def),
    constraints: constraints.rows,
  };
}
