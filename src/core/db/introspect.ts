/**
 * Schema intelligence: the whole structure of a database's user schemas (or of a few of them) from a fixed
 * handful of catalog queries per chunk of relations, whatever the number of tables (never one query per
 * table, never the whole catalog in one result). Repeated strings (schema names, types, column names,
 * defaults) are interned, so 50,000 tables of the same shape share their words.
 */
import type { RelationKind, SchemaSnapshot, TableInfo } from '../../shared/schema';
import { parseArrayLiteral } from './valueEncoding';
import type { DbSession } from './db';
import { serverNaming } from './indexDefinition';
import { ColumnLists, NameLists, ownColumns } from './sharedColumns';
import { finishForeignKeys, Interner, readChunk, type IntrospectState } from './introspectChunk';
import type { StatsRow } from './valueWords';
import { attachValueWords, VALUE_STATS_SQL } from './valueWords';
import {
  ENUMS_SQL,
  IN_SCHEMAS,
  OTHER_SCHEMAS_SQL,
  QUOTING_SQL,
  RELATIONS_SQL,
  textRows,
  USER_RELATIONS,
  type RelationRow,
} from './introspectQueries';

const KINDS: Record<string, RelationKind> = {
  r: 'table',
  p: 'partitioned_table',
  v: 'view',
  m: 'materialized_view',
  f: 'foreign_table',
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

/** Reads the structure of the user schemas. Runs on one session so all queries see the same catalog. */
export async function introspectSchema(session: DbSession, options: IntrospectOptions = {}): Promise<SchemaSnapshot> {
  const info = await session.query<{ database: string; version: string; num: string }>(
    `SELECT current_database() AS database, current_setting('server_version') AS version,
            current_setting('server_version_num') AS num`,
  );
  const schemas = options.schemas ? [...options.schemas] : null;
  const relations = await textRows<RelationRow>(session, RELATIONS_SQL, [schemas]);
  const enums = await session.query<{ oid: string; labels: string[] }>(ENUMS_SQL);
  const strings = new Interner();
  const byOid = new Map<string, TableInfo>();
  const state: IntrospectState = {
    byOid,
    enumLabels: new Map(enums.rows.map((e) => [e.oid, e.labels])),
    strings,
    naming: serverNaming((await session.queryText(QUOTING_SQL)).rows),
    nullsNotDistinct: Number(info.rows[0]?.num ?? 0) >= 150000,
    typeNames: new Map(),
    columnNames: new Map(),
    shapes: new Map(),
    columnLists: new ColumnLists(),
    nameLists: new NameLists(),
    defaultIds: new Map(),
    pending: [],
    outside: [],
    incoming: [],
    everySchema: schemas === null || (await session.queryText(OTHER_SCHEMAS_SQL, [schemas])).rows.length === 0,
  };
  for (const [oid, schema, name, kind, reltuples, comment, parentSchema, parentName] of relations) {
    const tuples = Number(reltuples);
    byOid.set(oid, {
      schema: strings.of(schema),
      name,
      kind: KINDS[kind] ?? 'table',
      comment,
      ...(parentSchema !== null && parentName !== null
        ? { partitionOf: { schema: strings.of(parentSchema), table: parentName } }
        : {}),
      // reltuples is -1 for a table never vacuumed or analyzed (PostgreSQL 14+), 0 for views.
      rowEstimate: (kind === 'r' || kind === 'p' || kind === 'm') && tuples >= 0 ? Math.round(tuples) : null,
      columns: [],
      primaryKey: null,
      uniqueConstraints: [],
      foreignKeys: [],
      indexes: [],
      triggers: [],
    });
  }
  // Chunks of neighbouring oids: each reads a narrow range of every catalog's index on the relation.
  const oids = relations.map((r) => Number(r[0])).sort((a, b) => a - b);
  relations.length = 0;
  for (let start = 0; start < oids.length; start += INTROSPECT_CHUNK) {
    await readChunk(session, oids.slice(start, start + INTROSPECT_CHUNK), state);
  }
  await finishForeignKeys(session, state);
  if (options.valueWords !== false) {
    const stats = await session.query<StatsRow>(VALUE_STATS_SQL + IN_SCHEMAS, [schemas]);
    attachValueWords(byOid, stats.rows);
  }
  if (options.sampleValues) {
    const samples = await session.query<{ oid: string; name: string; vals: string }>(SAMPLES_SQL, [schemas]);
    for (const s of samples.rows) {
      const table = byOid.get(s.oid);
      const at = table ? table.columns.findIndex((c) => c.name === s.name) : -1;
      const column = table && at >= 0 ? ownColumns(table)[at] : undefined;
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
