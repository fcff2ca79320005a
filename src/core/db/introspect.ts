/**
 * Schema intelligence: the whole structure of a database's user schemas from a fixed handful of catalog
 * queries, whatever the number of tables (never one query per table).
 */
import type { ColumnInfo, ReferentialAction, RelationKind, SchemaSnapshot, TableInfo } from '../../shared/schema';
import { parseArrayLiteral } from './valueEncoding';
import type { DbSession } from './db';
import type { StatsRow } from './valueWords';
import { attachValueWords, VALUE_STATS_SQL } from './valueWords';

const USER_RELATIONS = `
  c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\\_%'`;

const RELATIONS_SQL = `
SELECT c.oid::int8::text AS oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
       c.reltuples::float8 AS reltuples, obj_description(c.oid, 'pg_class') AS comment,
       inh.inhparent::int8::text AS parent_oid
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_inherits inh ON c.relispartition AND inh.inhrelid = c.oid
WHERE ${USER_RELATIONS}
ORDER BY n.nspname, c.relname`;

const COLUMNS_SQL = `
SELECT a.attrelid::int8::text AS oid, a.attnum::int AS num, a.attname AS name,
       format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable,
       pg_get_expr(d.adbin, d.adrelid) AS "default", col_description(a.attrelid, a.attnum) AS comment,
       a.atttypid::int8::text AS type_oid
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE ${USER_RELATIONS} AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum`;

const CONSTRAINTS_SQL = `
SELECT con.conrelid::int8::text AS oid, con.conname AS name, con.contype::text AS type,
       con.conkey::int[] AS columns, con.confrelid::int8::text AS ref_oid, con.confkey::int[] AS ref_columns,
       con.confdeltype::text AS on_delete, con.confupdtype::text AS on_update,
       CASE WHEN con.contype = 'c' THEN pg_get_constraintdef(con.oid) END AS definition
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE ${USER_RELATIONS} AND con.contype IN ('p', 'u', 'f', 'c')
ORDER BY con.conrelid, con.conname`;

const INDEXES_SQL = `
SELECT i.indrelid::int8::text AS oid, ic.relname AS name, i.indisunique AS unique, i.indisprimary AS primary,
       pg_get_indexdef(i.indexrelid) AS definition
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_class c ON c.oid = i.indrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE ${USER_RELATIONS}
ORDER BY i.indrelid, ic.relname`;

const TRIGGERS_SQL = `
SELECT t.tgrelid::int8::text AS oid, t.tgname AS name, t.tgenabled <> 'D' AS enabled,
       pg_get_triggerdef(t.oid) AS definition
FROM pg_trigger t
JOIN pg_class c ON c.oid = t.tgrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE ${USER_RELATIONS} AND NOT t.tgisinternal
ORDER BY t.tgrelid, t.tgname`;

const ENUMS_SQL = `
SELECT enumtypid::int8::text AS oid, array_agg(enumlabel::text ORDER BY enumsortorder) AS labels
FROM pg_enum GROUP BY enumtypid`;

interface RelationRow {
  oid: string;
  schema: string;
  name: string;
  kind: string;
  reltuples: number;
  comment: string | null;
  parent_oid: string | null;
}
interface ColumnRow {
  oid: string;
  num: number;
  name: string;
  type: string;
  nullable: boolean;
  default: string | null;
  comment: string | null;
  type_oid: string;
}
interface ConstraintRow {
  oid: string;
  name: string;
  type: string;
  columns: number[];
  ref_oid: string;
  ref_columns: number[] | null;
  on_delete: string;
  on_update: string;
  definition: string | null;
}
interface IndexRow {
  oid: string;
  name: string;
  unique: boolean;
  primary: boolean;
  definition: string;
}
interface TriggerRow {
  oid: string;
  name: string;
  enabled: boolean;
  definition: string;
}

const KINDS: Record<string, RelationKind> = {
  r: 'table',
  p: 'partitioned_table',
  v: 'view',
  m: 'materialized_view',
  f: 'foreign_table',
};

const ACTIONS: Record<string, ReferentialAction> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
};

/** Limits of sample values: they help a model match words to data, and they are data, so they stay small. */
export const SAMPLE_VALUES = { perColumn: 3, maxChars: 40 } as const;

// pg_stats (one query for the whole database) holds the planner's most common values per column; it only
// shows columns the user may read, and only after ANALYZE. No table is scanned.
const SAMPLES_SQL = `
SELECT c.oid::int8::text AS oid, s.attname AS name, s.most_common_vals::text AS vals
FROM pg_stats s
JOIN pg_namespace n ON n.nspname = s.schemaname
JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename
WHERE s.most_common_vals IS NOT NULL AND ${USER_RELATIONS}`;

export interface IntrospectOptions {
  /** Opt-in: attach a few common values per column (postgresAgent.schema.sampleValues). */
  sampleValues?: boolean;
  /** Words of pg_stats' common values and histogram bounds per text column, for linking only (default true). */
  valueWords?: boolean;
}

/** Reads the structure of every user schema. Runs on one session so all queries see the same catalog. */
export async function introspectSchema(session: DbSession, options: IntrospectOptions = {}): Promise<SchemaSnapshot> {
  const info = await session.query<{ database: string; version: string }>(
    `SELECT current_database() AS database, current_setting('server_version') AS version`,
  );
  const relations = await session.query<RelationRow>(RELATIONS_SQL);
  const columns = await session.query<ColumnRow>(COLUMNS_SQL);
  const constraints = await session.query<ConstraintRow>(CONSTRAINTS_SQL);
  const indexes = await session.query<IndexRow>(INDEXES_SQL);
  const triggers = await session.query<TriggerRow>(TRIGGERS_SQL);
  const enums = await session.query<{ oid: string; labels: string[] }>(ENUMS_SQL);
  const enumLabels = new Map(enums.rows.map((e) => [e.oid, e.labels]));

  const byOid = new Map<string, TableInfo>();
  const columnNames = new Map<string, Map<number, string>>();
  const parents = new Map<string, string>();
  for (const r of relations.rows) {
    if (r.parent_oid) parents.set(r.oid, r.parent_oid);
    byOid.set(r.oid, {
      schema: r.schema,
      name: r.name,
      kind: KINDS[r.kind] ?? 'table',
      comment: r.comment,
      // reltuples is -1 for a table never vacuumed or analyzed (PostgreSQL 14+), 0 for views.
      rowEstimate:
        (r.kind === 'r' || r.kind === 'p' || r.kind === 'm') && r.reltuples >= 0 ? Math.round(r.reltuples) : null,
      columns: [],
      primaryKey: null,
      uniqueConstraints: [],
      foreignKeys: [],
      indexes: [],
      triggers: [],
    });
    columnNames.set(r.oid, new Map());
  }
  for (const c of columns.rows) {
    const column: ColumnInfo = {
      name: c.name,
      type: c.type,
      nullable: c.nullable,
      default: c.default,
      comment: c.comment,
    };
    const labels = enumLabels.get(c.type_oid);
    if (labels) column.allowedValues = labels.slice(0, MAX_ALLOWED_VALUES);
    byOid.get(c.oid)?.columns.push(column);
    columnNames.get(c.oid)?.set(c.num, c.name);
  }
  const names = (oid: string, nums: readonly number[] | null) =>
    (nums ?? []).map((n) => columnNames.get(oid)?.get(n) ?? `#${n}`);
  for (const k of constraints.rows) {
    const table = byOid.get(k.oid);
    if (!table) continue;
    if (k.type === 'p') table.primaryKey = names(k.oid, k.columns);
    else if (k.type === 'c') attachCheckLiterals(table, names(k.oid, k.columns), k.definition);
    else if (k.type === 'u') table.uniqueConstraints.push(names(k.oid, k.columns));
    else {
      const target = byOid.get(k.ref_oid);
      table.foreignKeys.push({
        name: k.name,
        columns: names(k.oid, k.columns),
        references: {
          schema: target?.schema ?? '?',
          table: target?.name ?? `oid ${k.ref_oid}`,
          columns: names(k.ref_oid, k.ref_columns),
        },
        onDelete: ACTIONS[k.on_delete] ?? 'NO ACTION',
        onUpdate: ACTIONS[k.on_update] ?? 'NO ACTION',
      });
    }
  }
  for (const i of indexes.rows) {
    byOid.get(i.oid)?.indexes.push({ name: i.name, unique: i.unique, primary: i.primary, definition: i.definition });
  }
  for (const t of triggers.rows) {
    byOid.get(t.oid)?.triggers.push({ name: t.name, enabled: t.enabled, definition: t.definition });
  }
  for (const [oid, parentOid] of parents) {
    const table = byOid.get(oid);
    const parent = byOid.get(parentOid);
    if (table && parent) table.partitionOf = { schema: parent.schema, table: parent.name };
  }
  if (options.valueWords !== false) {
    const stats = await session.query<StatsRow>(VALUE_STATS_SQL);
    attachValueWords(byOid, stats.rows);
  }
  if (options.sampleValues) {
    const samples = await session.query<{ oid: string; name: string; vals: string }>(SAMPLES_SQL);
    for (const s of samples.rows) {
      const column = byOid.get(s.oid)?.columns.find((c) => c.name === s.name);
      if (!column) continue;
      column.samples = parseArrayLiteral(s.vals)
        .filter((v): v is string => typeof v === 'string')
        .slice(0, SAMPLE_VALUES.perColumn)
        .map((v) => (v.length > SAMPLE_VALUES.maxChars ? `${v.slice(0, SAMPLE_VALUES.maxChars - 1)}…` : v));
    }
  }
  const first = info.rows[0];
  return {
    database: first?.database ?? '',
    serverVersion: first?.version ?? '',
    tables: [...byOid.values()],
  };
}

/** Enum labels and CHECK literals kept per column at most (a 200-label enum is a lookup table, not a hint). */
const MAX_ALLOWED_VALUES = 30;

/** String literals of a CHECK constraint (`status = ANY (ARRAY['paid'::text, ...])`), given to the columns it names. */
function attachCheckLiterals(table: TableInfo, columns: readonly string[], definition: string | null): void {
  if (!definition) return;
  const literals = [...definition.matchAll(/'((?:[^']|'')*)'/g)]
    .map((m) => (m[1] ?? '').replaceAll("''", "'"))
    .filter((v) => v.trim() !== '');
  if (literals.length === 0) return;
  for (const name of columns) {
    const column = table.columns.find((c) => c.name === name);
    if (!column) continue;
    column.allowedValues = [...new Set([...(column.allowedValues ?? []), ...literals])].slice(0, MAX_ALLOWED_VALUES);
  }
}
