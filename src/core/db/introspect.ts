/**
 * Schema intelligence: the whole structure of a database's user schemas (or of a few of them) from a fixed
 * handful of catalog queries per chunk of relations, whatever the number of tables (never one query per
 * table, never the whole catalog in one result). Repeated strings (schema names, types, column names,
 * defaults) are interned, so 50,000 tables of the same shape share their words.
 */
import type { ColumnInfo, ReferentialAction, RelationKind, SchemaSnapshot, TableInfo } from '../../shared/schema';
import { parseArrayLiteral } from './valueEncoding';
import type { DbSession } from './db';
import type { StatsRow } from './valueWords';
import { attachValueWords, VALUE_STATS_SQL } from './valueWords';
import {
  COLUMN_NAMES_SQL,
  COLUMNS_SQL,
  CONSTRAINTS_SQL,
  ENUMS_SQL,
  IN_SCHEMAS,
  INDEXES_SQL,
  RELATIONS_SQL,
  TRIGGERS_SQL,
  USER_RELATIONS,
  type ColumnRow,
  type ConstraintRow,
  type IndexRow,
  type RelationRow,
  type TriggerRow,
} from './introspectQueries';

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

/** Relations read per round of column/constraint/index/trigger queries: bounds the rows held at once. */
export const INTROSPECT_CHUNK = 10_000;

/** Limits of sample values: they help a model match words to data, and they are data, so they stay small. */
export const SAMPLE_VALUES = { perColumn: 3, maxChars: 40 } as const;

// pg_stats (one query for the whole database) holds the planner's most common values per column; it only
// shows columns the user may read, and only after ANALYZE. No table is scanned.
const SAMPLES_SQL = `
SELECT c.oid::int8::text AS oid, s.attname AS name, s.most_common_vals::text AS vals
FROM pg_stats s
JOIN pg_namespace n ON n.nspname = s.schemaname
JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename
WHERE s.most_common_vals IS NOT NULL AND ${USER_RELATIONS}${IN_SCHEMAS}`;

export interface IntrospectOptions {
  /** Opt-in: attach a few common values per column (postgresAgent.schema.sampleValues). */
  sampleValues?: boolean;
  /** Words of pg_stats' common values and histogram bounds per text column, for linking only (default true). */
  valueWords?: boolean;
  /** Only these schemas (the schema cache refreshes the schemas that changed); default every user schema. */
  schemas?: readonly string[];
}

/** One copy of each repeated string. */
class Interner {
  private readonly strings = new Map<string, string>();
  of(value: string): string;
  of(value: string | null): string | null;
  of(value: string | null): string | null {
    if (value === null) return null;
    const known = this.strings.get(value);
    if (known !== undefined) return known;
    this.strings.set(value, value);
    return value;
  }
}

/** Reads the structure of the user schemas. Runs on one session so all queries see the same catalog. */
export async function introspectSchema(session: DbSession, options: IntrospectOptions = {}): Promise<SchemaSnapshot> {
  const info = await session.query<{ database: string; version: string }>(
    `SELECT current_database() AS database, current_setting('server_version') AS version`,
  );
  const schemas = options.schemas ? [...options.schemas] : null;
  const relations = await session.query<RelationRow>(RELATIONS_SQL, [schemas]);
  const enums = await session.query<{ oid: string; labels: string[] }>(ENUMS_SQL);
  const enumLabels = new Map(enums.rows.map((e) => [e.oid, e.labels]));
  const strings = new Interner();

  const byOid = new Map<string, TableInfo>();
  for (const r of relations.rows) {
    byOid.set(r.oid, {
      schema: strings.of(r.schema),
      name: r.name,
      kind: KINDS[r.kind] ?? 'table',
      comment: r.comment,
      ...(r.parent_schema !== null && r.parent_name !== null
        ? { partitionOf: { schema: strings.of(r.parent_schema), table: r.parent_name } }
        : {}),
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
  }
  const oids = relations.rows.map((r) => r.oid);
  relations.rows.length = 0;
  const read: ChunkState = { columnNames: new Map(), pending: [] };
  for (let start = 0; start < oids.length; start += INTROSPECT_CHUNK) {
    const chunk = oids.slice(start, start + INTROSPECT_CHUNK);
    await readChunk(session, chunk, byOid, enumLabels, strings, read);
  }
  await resolveForeignKeys(session, read, strings);
  if (options.valueWords !== false) {
    const stats = await session.query<StatsRow>(VALUE_STATS_SQL + IN_SCHEMAS, [schemas]);
    attachValueWords(byOid, stats.rows);
  }
  if (options.sampleValues) {
    const samples = await session.query<{ oid: string; name: string; vals: string }>(SAMPLES_SQL, [schemas]);
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

/** What the chunks share: column names by attnum per relation, and foreign keys whose target columns are named last. */
interface ChunkState {
  columnNames: Map<string, string[]>;
  pending: { columns: string[]; oid: string; nums: readonly number[] }[];
}

/** Names the target columns of every foreign key, reading the few tables outside the relations read. */
async function resolveForeignKeys(session: DbSession, read: ChunkState, strings: Interner): Promise<void> {
  const outside = [...new Set(read.pending.map((p) => p.oid).filter((oid) => !read.columnNames.has(oid)))];
  if (outside.length > 0) {
    const rows = await session.query<{ oid: string; num: number; name: string }>(COLUMN_NAMES_SQL, [outside]);
    for (const r of rows.rows) {
      let names = read.columnNames.get(r.oid);
      if (!names) read.columnNames.set(r.oid, (names = []));
      names[r.num] = strings.of(r.name);
    }
  }
  for (const p of read.pending) {
    for (const n of p.nums) p.columns.push(read.columnNames.get(p.oid)?.[n] ?? `#${n}`);
  }
}

/** Columns, constraints, indexes and triggers of one chunk of relations, attached to their tables. */
async function readChunk(
  session: DbSession,
  chunk: readonly string[],
  byOid: ReadonlyMap<string, TableInfo>,
  enumLabels: ReadonlyMap<string, string[]>,
  strings: Interner,
  read: ChunkState,
): Promise<void> {
  const columnNames = read.columnNames;
  const columns = await session.query<ColumnRow>(COLUMNS_SQL, [chunk]);
  for (const c of columns.rows) {
    const column: ColumnInfo = {
      name: strings.of(c.name),
      type: strings.of(c.type),
      nullable: c.nullable,
      default: strings.of(c.default),
      comment: c.comment,
    };
    const labels = enumLabels.get(c.type_oid);
    if (labels) column.allowedValues = labels.slice(0, MAX_ALLOWED_VALUES);
    byOid.get(c.oid)?.columns.push(column);
    let names = columnNames.get(c.oid);
    if (!names) columnNames.set(c.oid, (names = []));
    names[c.num] = column.name;
  }
  const names = (oid: string, nums: readonly number[] | null) =>
    (nums ?? []).map((n) => columnNames.get(oid)?.[n] ?? `#${n}`);
  const constraints = await session.query<ConstraintRow>(CONSTRAINTS_SQL, [chunk]);
  for (const k of constraints.rows) {
    const table = byOid.get(k.oid);
    if (!table) continue;
    if (k.type === 'p') table.primaryKey = names(k.oid, k.columns);
    else if (k.type === 'c') attachCheckLiterals(table, names(k.oid, k.columns), k.definition);
    else if (k.type === 'u') table.uniqueConstraints.push(names(k.oid, k.columns));
    else {
      const refColumns: string[] = [];
      read.pending.push({ columns: refColumns, oid: k.ref_oid, nums: k.ref_columns ?? [] });
      table.foreignKeys.push({
        name: k.name,
        columns: names(k.oid, k.columns),
        references: { schema: strings.of(k.ref_schema ?? '?'), table: k.ref_table ?? '?', columns: refColumns },
        onDelete: ACTIONS[k.on_delete] ?? 'NO ACTION',
        onUpdate: ACTIONS[k.on_update] ?? 'NO ACTION',
      });
    }
  }
  const indexes = await session.query<IndexRow>(INDEXES_SQL, [chunk]);
  for (const i of indexes.rows) {
    byOid.get(i.oid)?.indexes.push({ name: i.name, unique: i.unique, primary: i.primary, definition: i.definition });
  }
  const triggers = await session.query<TriggerRow>(TRIGGERS_SQL, [chunk]);
  for (const t of triggers.rows) {
    byOid.get(t.oid)?.triggers.push({ name: t.name, enabled: t.enabled, definition: t.definition });
  }
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
