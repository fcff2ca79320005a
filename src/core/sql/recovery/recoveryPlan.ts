/**
 * The way back from destructive DDL, as the impact shows it before approval (issue 25): for each DROP TABLE,
 * DROP COLUMN and TRUNCATE, whether the executor will keep what it destroys in the quarantine (and what that
 * costs), or why there is no way back. Catalog reads only. The executor (runWithRecovery.ts) does what the
 * approved plan says, and refuses to run when it no longer can.
 */
import type { DbSession } from '../../db/db';
import { describeSize } from '../../../shared/lockPhrases';
import type { RecoveryView } from '../../../shared/impactReport';
import type { StatementClassification } from '../classification';
import type { DdlChange } from '../ddl/ddlPlan';
import { planStatement } from '../ddl/lockModel';
import type { RecoverySettings } from '../safetySettings';
import { quoteQualified } from '../tableEffects';
import { recoveryInForce } from './recoveryInForce';
import { isQuarantineSchema, QUARANTINE_SCHEMA, QUARANTINE_TABLE_SCHEMA_PREFIX } from './quarantineStore';

/** Bytes per second a copy into the quarantine is assumed to take (measured: bench/recovery.bench.ts). */
export const COPY_BYTES_PER_SECOND = 50 * 1024 * 1024;

export interface RelationFacts {
  oid: number;
  /** "schema.name", as shown. */
  name: string;
  schema: string;
  relname: string;
  relkind: string;
  /** A partition, a partitioned table, or a table with inheritance parents or children. */
  inherits: boolean;
  /** pg_table_size: heap and TOAST, without indexes (what a copy of the rows costs). */
  bytes: number;
  rows: number | null;
}

/** Facts of a relation by name as written (resolved with the search_path) or by oid. */
export async function relationFacts(session: DbSession, relation: string | number): Promise<RelationFacts | undefined> {
  const where = typeof relation === 'number' ? '$1::text::int8::oid' : 'to_regclass($1)';
  const result = await session.query<{
    oid: number;
    schema: string;
    relname: string;
    relkind: string;
    inherits: boolean;
    bytes: number;
    rows: number;
  }>(
    `SELECT c.oid::int8::float8 AS oid, n.nspname AS schema, c.relname, c.relkind::text AS relkind,
            (c.relispartition OR c.relkind = 'p' OR EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = c.oid OR i.inhparent = c.oid)) AS inherits,
            pg_table_size(c.oid)::float8 AS bytes, c.reltuples::float8 AS rows
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = ${where}`,
    [typeof relation === 'number' ? String(relation) : quoteQualified(relation)],
  );
  const r = result.rows[0];
  if (!r) return undefined;
  return {
    oid: r.oid,
    name: `${r.schema}.${r.relname}`,
    schema: r.schema,
    relname: r.relname,
    relkind: r.relkind,
    inherits: r.inherits,
    bytes: r.bytes,
    rows: r.rows < 0 ? null : Math.round(r.rows),
  };
}

/** The tables a TRUNCATE … CASCADE also empties: every table referencing one of them, transitively. */
export async function truncatedWithCascade(session: DbSession, oids: readonly number[]): Promise<number[]> {
  const result = await session.query<{ oid: number }>(
    `WITH RECURSIVE t(oid, depth) AS (
       SELECT unnest($1::int8[])::oid, 0
       UNION
       SELECT c.conrelid, t.depth + 1 FROM t JOIN pg_constraint c ON c.confrelid = t.oid AND c.contype = 'f' WHERE t.depth < 50
     )
     SELECT oid::int8::float8 AS oid FROM t GROUP BY oid ORDER BY min(depth), oid`,
    [oids],
  );
  return result.rows.map((r) => r.oid);
}

/** The way back from each destructive statement, in statement order (statements that destroy nothing have none). */
export async function planRecovery(
  session: DbSession,
  statements: readonly StatementClassification[],
  own: RecoverySettings,
): Promise<RecoveryView[]> {
  const views: RecoveryView[] = [];
  const { settings, source } = await recoveryInForce(session, own);
  for (const [index, statement] of statements.entries()) {
    if (!statement.destructive) continue;
    const changes = planStatement(statement.sql).changes;
    const base = { statement: index, retentionDays: settings.retentionDays };
    if (!settings.enabled) {
      views.push({
        ...base,
        way: 'none',
        targets: [],
        bytes: null,
        summary: `No way back: the recovery window is off (${source}).`,
      });
      continue;
    }
    const view = await planOne(session, changes, settings);
    if (view) views.push({ ...base, ...view });
  }
  return views;
}

type Planned = Omit<RecoveryView, 'statement' | 'retentionDays'>;

async function planOne(
  session: DbSession,
  changes: readonly DdlChange[],
  settings: RecoverySettings,
): Promise<Planned | undefined> {
  const drop = changes.find((c) => c.kind === 'drop');
  if (drop?.kind === 'drop' && drop.objectType === 'OBJECT_TABLE')
    return planDropTable(session, drop.objects, settings);
  const dropColumns = changes.filter((c) => c.kind === 'dropColumn');
  if (dropColumns.length > 0) return planDropColumns(session, dropColumns, settings);
  // The quarantine's own schemas (a restore or a purge) are dropped without a way back of their own.
  if (drop?.kind === 'drop' && drop.objectType === 'OBJECT_SCHEMA' && drop.objects.every(isQuarantineSchema))
    return undefined;
  const truncate = changes.find((c) => c.kind === 'truncate');
  if (truncate?.kind === 'truncate') return planTruncate(session, truncate.tables, truncate.cascade, settings);
  const what = drop?.kind === 'drop' ? `DROP ${drop.objectType.replace('OBJECT_', '')}` : 'This statement';
  return {
    way: 'none',
    targets: [],
    bytes: null,
    summary: `No way back: ${what} has no recovery in pg-agent (only DROP TABLE, DROP COLUMN and TRUNCATE have one).`,
  };
}

async function planDropTable(
  session: DbSession,
  objects: readonly string[],
  settings: RecoverySettings,
): Promise<Planned | undefined> {
  const facts: RelationFacts[] = [];
  for (const name of objects) {
    const f = await relationFacts(session, name);
    if (!f || isQuarantineSchema(f.schema)) continue;
    if (f.relkind !== 'r' || f.inherits) {
      return {
        way: 'none',
        targets: [f.name],
        bytes: null,
        summary: `No way back: ${f.name} is a partition, partitioned or inherited table, which pg-agent does not quarantine.`,
      };
    }
    facts.push(f);
  }
  if (facts.length === 0) return undefined;
  const names = facts.map((f) => f.name);
  const size = facts.reduce((sum, f) => sum + f.bytes, 0);
  return {
    way: 'quarantine',
    targets: names,
    bytes: 0,
    summary:
      `Way back: ${names.join(', ')} (${describeSize(sum(facts.map((f) => f.rows)), size)}) ${names.length === 1 ? 'is' : 'are'} moved to a quarantine schema (${QUARANTINE_TABLE_SCHEMA_PREFIX}…) instead of dropped, ` +
      `kept ${settings.retentionDays} days; \`pg-agent undo <ticket>\` puts ${names.length === 1 ? 'it' : 'them'} back with indexes, constraints and triggers. ` +
      'Costs no copy (a rename) and no space freed until purged; views and foreign keys of other tables that CASCADE drops are re-created by the undo.',
  };
}

async function planDropColumns(
  session: DbSession,
  drops: readonly Extract<DdlChange, { kind: 'dropColumn' }>[],
  settings: RecoverySettings,
): Promise<Planned> {
  const targets: string[] = [];
  let bytes = 0;
  for (const drop of drops) {
    const f = await relationFacts(session, drop.table);
    if (!f) continue;
    const column = await session.query<{ pk: boolean; generated: boolean; width: number | null; key: number }>(
      `SELECT a.attnum = ANY(coalesce(p.conkey, '{}')) AS pk, (a.attgenerated <> '' OR a.attidentity <> '') AS generated,
              (SELECT s.avg_width FROM pg_stats s WHERE s.schemaname = $2 AND s.tablename = $3 AND s.attname = a.attname)::float8 AS width,
              coalesce(array_length(p.conkey, 1), 0) AS key
       FROM pg_attribute a LEFT JOIN pg_constraint p ON p.conrelid = a.attrelid AND p.contype = 'p'
       WHERE a.attrelid = $1::int8::oid AND a.attname = $4 AND NOT a.attisdropped`,
      [f.oid, f.schema, f.relname, drop.column],
    );
    const c = column.rows[0];
    if (!c) continue;
    const target = `${f.name}.${drop.column}`;
    if (c.key === 0) return none(target, `${f.name} has no primary key to key the copy of ${drop.column} by`);
    if (c.pk) return none(target, `${drop.column} is part of the primary key of ${f.name}`);
    if (c.generated)
      return none(target, `${drop.column} is a generated or identity column; re-add it by its definition`);
    // avg_width × rows (plus the key) when the column has statistics; otherwise the whole table, as an upper bound.
    bytes += c.width !== null && f.rows !== null ? Math.round((c.width + 8) * f.rows) : f.bytes;
    targets.push(target);
  }
  if (targets.length === 0)
    return { way: 'none', targets: [], bytes: null, summary: 'No way back: the column was not found.' };
  return copied(
    targets,
    bytes,
    settings,
    (kept) =>
      `Way back: the values of ${targets.join(', ')} are copied, keyed by the primary key, to ${QUARANTINE_SCHEMA} before the drop (about ${describeBytes(bytes)}, ${describeSeconds(bytes)}), ` +
      `${kept}; \`pg-agent undo <ticket>\` adds the column back (at the end of the table) with its values, default, NOT NULL, indexes and constraints.`,
  );
}

async function planTruncate(
  session: DbSession,
  tables: readonly string[],
  cascade: boolean,
  settings: RecoverySettings,
): Promise<Planned | undefined> {
  const named: RelationFacts[] = [];
  for (const t of tables) {
    const f = await relationFacts(session, t);
    if (f && !isQuarantineSchema(f.schema)) named.push(f);
  }
  if (named.length === 0) return undefined;
  const oids = cascade
    ? await truncatedWithCascade(
        session,
        named.map((f) => f.oid),
      )
    : named.map((f) => f.oid);
  const all: RelationFacts[] = [];
  for (const oid of oids) {
    const f = await relationFacts(session, oid);
    if (f) all.push(f);
  }
  const targets = all.map((f) => f.name);
  const partitioned = all.find((f) => f.inherits);
  if (partitioned)
    return none(targets.join(', '), `${partitioned.name} is a partition, partitioned or inherited table`);
  const bytes = all.reduce((total, f) => total + f.bytes, 0);
  return copied(
    targets,
    bytes,
    settings,
    (kept) =>
      `Way back: the rows of ${targets.join(', ')} (${describeSize(sum(all.map((f) => f.rows)), bytes)}) are copied to ${QUARANTINE_SCHEMA} before the TRUNCATE (${describeSeconds(bytes)}), ` +
      `${kept}; \`pg-agent undo <ticket>\` inserts them back (their INSERT triggers fire; sequences are not reset).`,
  );
}

/** A way back by copy into the quarantine, unless the copy would exceed recovery.maxCopyBytes. */
function copied(
  targets: string[],
  bytes: number,
  settings: RecoverySettings,
  summary: (kept: string) => string,
): Planned {
  if (bytes > settings.maxCopyBytes) return tooBig(targets, bytes, settings);
  return { way: 'copy', targets, bytes, summary: summary(`kept ${settings.retentionDays} days`) };
}

function none(target: string, why: string): Planned {
  return { way: 'none', targets: [target], bytes: null, summary: `No way back: ${why}.` };
}

function tooBig(targets: string[], bytes: number, settings: RecoverySettings): Planned {
  return {
    way: 'none',
    targets,
    bytes,
    summary: `No way back: a copy of ${targets.join(', ')} would take ${describeBytes(bytes)}, above the ${describeBytes(settings.maxCopyBytes)} limit (recovery.maxCopyBytes). Once it runs, it cannot be undone.`,
  };
}

function sum(values: readonly (number | null)[]): number | null {
  return values.some((v) => v === null) ? null : values.reduce<number>((a, v) => a + (v ?? 0), 0);
}

function describeBytes(bytes: number): string {
  return describeSize(0, bytes).replace(/^0 rows, /, '');
}

function describeSeconds(bytes: number): string {
  const seconds = bytes / COPY_BYTES_PER_SECOND;
  return seconds < 1 ? 'under a second' : `about ${Math.ceil(seconds)} s`;
}
