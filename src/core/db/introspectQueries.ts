/**
 * The catalog queries of introspection. Relations come first (one small row each); everything else is read
 * per chunk of relations (`$1`: their oids; `$2`, `$3`: the lowest and highest of them, so that each catalog
 * is read by ranges of its index on the relation, once over all chunks, not scanned whole per chunk), so no
 * query materialises the whole catalog at once. Names a
 * table points to (a foreign key's target, a partition's parent) are read with it, so a schema can be
 * introspected alone and still be right.
 * Cheap per row: comments are joined or read apart (not one obj_description/col_description call per row),
 * format_type and pg_get_indexdef run once per distinct input, not once per column or index (introspectChunk.ts
 * asks for them after the plain rows: TYPE_NAMES_SQL, INDEX_DEFINITIONS_SQL), and what repeats across relations
 * (column lists, defaults) comes once with the relations that share it. Rows come as text (queryText), read by
 * position.
 */
import type { DbSession } from './db';
import { parseArrayLiteral } from './valueEncoding';

export const USER_RELATIONS = `
  c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\\_%'`;

const DESCRIPTION = (alias: string, oid: string, sub: string) =>
  `LEFT JOIN pg_catalog.pg_description ${alias} ON ${alias}.objoid = ${oid} ` +
  `AND ${alias}.classoid = 'pg_catalog.pg_class'::regclass AND ${alias}.objsubid = ${sub}`;

/**
 * A chunk's relations (`$1`..`$3`): the range is what the catalog's index on the relation is read by; the oids
 * are compared as int8 so that the planner never takes them for 10,000 index probes (or, with the catalog's
 * estimates, for a reason to scan it whole per chunk), and filter the range's rows by one hash lookup each.
 */
const inChunk = (column: string) => `${column}::int8 = ANY($1::int8[]) AND ${column} BETWEEN $2 AND $3`;

/** `$1`: the schemas to read (text[]), or NULL for every user schema. */
export const RELATIONS_SQL = `
SELECT c.oid, n.nspname, c.relname, c.relkind, c.reltuples::float8, ds.description, pn.nspname, pc.relname
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
${DESCRIPTION('ds', 'c.oid', '0')}
LEFT JOIN pg_inherits inh ON c.relispartition AND inh.inhrelid = c.oid
LEFT JOIN pg_class pc ON pc.oid = inh.inhparent
LEFT JOIN pg_namespace pn ON pn.oid = pc.relnamespace
WHERE ${USER_RELATIONS} AND ($1::text[] IS NULL OR n.nspname = ANY($1::text[]))
ORDER BY n.nspname, c.relname`;
export type RelationRow = [
  oid: string,
  schema: string,
  name: string,
  kind: string,
  reltuples: string,
  comment: string | null,
  parentSchema: string | null,
  parentName: string | null,
];

/**
 * `$1`..`$3`: a chunk of relation oids (see above). One row per shape of relation: the columns of a relation
 * packed (parseColumnList), and every relation of the chunk that has exactly those columns (a multi-tenant estate:
 * the same tables in every schema), so the client reads each shape once, not once per relation. The type is named
 * by TYPE_NAMES_SQL.
 */
export const COLUMNS_SQL = `
SELECT s.facts, s.names, array_agg(s.attrelid)
FROM (
  SELECT a.attrelid,
         string_agg(a.attnum || ' ' || a.atttypid || ' ' || a.atttypmod || ' ' ||
                    CASE WHEN a.attnotnull THEN 't' ELSE 'f' END || ' ' || a.attcollation, ' ') AS facts,
         array_agg(a.attname) AS names
  FROM pg_attribute a
  WHERE ${inChunk('a.attrelid')} AND a.attnum > 0 AND NOT a.attisdropped
  GROUP BY a.attrelid
) s
GROUP BY s.facts, s.names`;
export type ColumnListRow = [facts: string, names: string, oids: string];

/** One column of a COLUMNS_SQL row. */
export interface ListedColumn {
  num: number;
  name: string;
  typeOid: string;
  typmod: string;
  notNull: boolean;
  collation: string;
}

/** The columns of a COLUMNS_SQL row (facts: five words per column; names: their array, in the same order), by attnum. */
export function parseColumnList(facts: string, names: string): ListedColumn[] {
  const words = facts.split(' ');
  const list = parseArrayLiteral(names);
  const columns: ListedColumn[] = [];
  for (let i = 0; i < list.length; i++) {
    const w = i * 5;
    columns.push({
      num: Number(words[w]),
      name: String(list[i]),
      typeOid: words[w + 1] ?? '',
      typmod: words[w + 2] ?? '',
      notNull: words[w + 3] === 't',
      collation: words[w + 4] ?? '',
    });
  }
  return columns.sort((a, b) => a.num - b.num);
}

/**
 * The comments of the columns in the chunk's range of oids (`$1`, `$2`: its lowest and highest; the rows of
 * relations not read are dropped by the reader): a range of the index, no probe per relation.
 */
export const COLUMN_COMMENTS_SQL = `
SELECT ds.objoid, ds.objsubid, ds.description FROM pg_catalog.pg_description ds
WHERE ds.classoid = 'pg_catalog.pg_class'::regclass AND ds.objsubid > 0 AND ds.objoid BETWEEN $1 AND $2`;
export type CommentRow = [oid: string, num: string, comment: string];

/** format_type of each distinct (type, modifier) pair: `$1` types, `$2` modifiers. */
export const TYPE_NAMES_SQL = `
SELECT pg_catalog.format_type(u.t, u.m) FROM unnest($1::oid[], $2::int4[]) WITH ORDINALITY AS u(t, m, i) ORDER BY u.i`;

/**
 * Defaults and generated expressions, deparsed, one row per distinct text with the columns that have it. A tree
 * without a column in it (every default: only a generated column names columns) is deparsed without opening its
 * relation (`0`), which says the same at a fraction of the cost.
 */
export const DEFAULTS_SQL = `
SELECT x.expression, array_agg(x.adrelid), array_agg(x.adnum)
FROM (
  SELECT d.adrelid, d.adnum,
         CASE WHEN d.adbin::text LIKE '%{VAR %' THEN pg_catalog.pg_get_expr(d.adbin, d.adrelid)
              ELSE pg_catalog.pg_get_expr(d.adbin, 0) END AS expression
  FROM pg_attrdef d
  WHERE ${inChunk('d.adrelid')}
) x
GROUP BY x.expression`;
export type DefaultRow = [expression: string | null, oids: string, nums: string];

/** Primary keys: one row per list of key columns (`{1}` for most tables), with the relations that have it. */
export const PRIMARY_KEYS_SQL = `
SELECT con.conkey, array_agg(con.conrelid)
FROM pg_constraint con
WHERE ${inChunk('con.conrelid')} AND con.contype = 'p'
GROUP BY con.conkey`;
export type PrimaryKeyRow = [columns: string, oids: string];

/**
 * The other constraints. A foreign key's target is named from the relations read, or by RELATION_NAMES_SQL when
 * outside them.
 */
export const CONSTRAINTS_SQL = `
SELECT con.conrelid, con.conname, con.contype, con.conkey, con.confrelid, con.confkey, con.confdeltype,
       con.confupdtype, CASE WHEN con.contype = 'c' THEN pg_catalog.pg_get_constraintdef(con.oid) END
FROM pg_constraint con
WHERE ${inChunk('con.conrelid')} AND con.contype IN ('u', 'f', 'c')
ORDER BY con.conrelid, con.conname`;
export type ConstraintRow = [
  oid: string,
  name: string,
  type: string,
  columns: string | null,
  refOid: string,
  refColumns: string | null,
  onDelete: string,
  onUpdate: string,
  definition: string | null,
];

/**
 * Foreign keys pointing to the chunk's relations (their columns are named by attnum, later). Those from the
 * relations read are known from their CONSTRAINTS_SQL rows already: this is read only when some schemas are
 * not read, for the keys from there.
 */
export const INCOMING_SQL = `
SELECT con.confrelid, n.nspname, c.relname, con.conrelid, con.conkey, con.confdeltype, con.conname
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE con.contype = 'f' AND ${inChunk('con.confrelid')}
ORDER BY con.confrelid, n.nspname, c.relname, con.conname`;
export type IncomingRow = [
  oid: string,
  schema: string,
  table: string,
  fromOid: string,
  columns: string,
  onDelete: string,
  name: string,
];

/**
 * Indexes. A plain one (columns only, no expression, predicate, options, INCLUDE, ordering or NULLS NOT
 * DISTINCT) has its definition written by indexDefinition.ts exactly as pg_get_indexdef writes it; the others
 * are deparsed by the server (`definition` here, or INDEX_DEFINITIONS_SQL when only the client finds one is
 * not plain: a non-default operator class or collation, or a default one that takes options, QUOTING_SQL).
 * `nullsNotDistinct`: the server has indnullsnotdistinct (15+).
 */
export function indexesSql(nullsNotDistinct: boolean): string {
  const plain = `i.indexprs IS NULL AND i.indpred IS NULL AND ic.reloptions IS NULL AND ic.relkind = 'i'
    AND i.indnkeyatts = i.indnatts AND 0 <> ALL (i.indkey::int2[]) AND 0 = ALL (i.indoption::int2[])
    ${nullsNotDistinct ? 'AND NOT i.indnullsnotdistinct' : ''}`;
  return `
SELECT i.indrelid, ic.relname, i.indisunique, i.indisprimary, i.indexrelid, am.amname, ic.relam,
       i.indkey, i.indclass, i.indcollation,
       CASE WHEN NOT (${plain}) THEN pg_catalog.pg_get_indexdef(i.indexrelid) END
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_am am ON am.oid = ic.relam
WHERE ${inChunk('i.indrelid')}
ORDER BY i.indrelid, ic.relname`;
}
export type IndexRow = [
  oid: string,
  name: string,
  unique: string,
  primary: string,
  indexOid: string,
  am: string,
  amOid: string,
  keys: string,
  classes: string,
  collations: string,
  definition: string | null,
];

/** pg_get_indexdef of the indexes `$1`, in order. */
export const INDEX_DEFINITIONS_SQL = `
SELECT pg_catalog.pg_get_indexdef(u.x) FROM unnest($1::oid[]) WITH ORDINALITY AS u(x, i) ORDER BY u.i`;

/**
 * The options support function's number of each built-in index method: an index column's operator class options
 * (`tsvector_ops (siglen = 32)`, kept in the index's pg_attribute.attoptions) exist only for a class that has one.
 */
const OPTIONS_PROC = `CASE a.amname WHEN 'btree' THEN 5 WHEN 'hash' THEN 3 WHEN 'gist' THEN 10 WHEN 'gin' THEN 7
  WHEN 'spgist' THEN 7 WHEN 'brin' THEN 5 END`;

/**
 * What indexDefinition.ts needs to write a definition as the server would: its quoting and default operator
 * classes. Default classes that may carry options (or of an index method not built in) are left out: an index
 * using one is never plain, so its options never need reading per index.
 */
export const QUOTING_SQL = `
SELECT 'k', word FROM pg_catalog.pg_get_keywords() WHERE catcode <> 'U'
UNION ALL SELECT 'q', current_setting('quote_all_identifiers')
UNION ALL SELECT 'd', c.opcmethod::text || ' ' || c.opcintype::text || ' ' || c.oid::text
FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE c.opcdefault AND ${OPTIONS_PROC} IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM pg_amproc p WHERE p.amprocfamily = c.opcfamily AND p.amprocnum = ${OPTIONS_PROC})`;

/** The triggers in the chunk's range of oids (`$1`, `$2`, as COLUMN_COMMENTS_SQL): most are internal (foreign keys'). */
export const TRIGGERS_SQL = `
SELECT t.tgrelid, t.tgname, t.tgenabled <> 'D', pg_catalog.pg_get_triggerdef(t.oid)
FROM pg_trigger t
WHERE t.tgrelid BETWEEN $1 AND $2 AND NOT t.tgisinternal
ORDER BY t.tgrelid, t.tgname`;
export type TriggerRow = [oid: string, name: string, enabled: string, definition: string];

export const ENUMS_SQL = `
SELECT enumtypid::int8::text AS oid, array_agg(enumlabel::text ORDER BY enumsortorder) AS labels
FROM pg_enum GROUP BY enumtypid`;

/** The schemas filter appended to a pg_stats query (`$1`, as RELATIONS_SQL). */
export const IN_SCHEMAS = ` AND ($1::text[] IS NULL OR n.nspname = ANY($1::text[]))`;

/** A table (a possible foreign key's source) in a user schema other than `$1`: none means every source is read. */
export const OTHER_SCHEMAS_SQL = `
SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
  AND NOT n.nspname = ANY($1::text[])
LIMIT 1`;

/** Schema and name of relations outside the relations read (a foreign key's target in another schema). */
export const RELATION_NAMES_SQL = `
SELECT c.oid::int8::text, n.nspname, c.relname
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = ANY($1::oid[])`;

/** Column names of tables outside the relations read (a foreign key's target in a schema not introspected now). */
export const COLUMN_NAMES_SQL = `
SELECT a.attrelid::int8::text AS oid, a.attnum::int AS num, a.attname AS name
FROM pg_attribute a WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped`;

/** `$1`..`$3` of a chunk's queries. */
export type ChunkParams = [oids: string[], lowest: number, highest: number];

/** A query's rows as text, typed by position (the row types above). */
export async function textRows<Row>(session: DbSession, sql: string, params?: readonly unknown[]): Promise<Row[]> {
  return (await session.queryText(sql, params)).rows as unknown as Row[];
}
