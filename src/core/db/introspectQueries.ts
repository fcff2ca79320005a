/**
 * The catalog queries of introspection and the rows they give. Relations come first (one small row each);
 * everything else is read per chunk of relations (`= ANY($1::oid[])`), so no query materialises the whole
 * catalog at once. Names a table points to (a foreign key's target, a partition's parent) are read with it,
 * so a schema can be introspected alone and still be right.
 */

export const USER_RELATIONS = `
  c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\\_%'`;

/** `$1`: the schemas to read (text[]), or NULL for every user schema. */
export const RELATIONS_SQL = `
SELECT c.oid::int8::text AS oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
       c.reltuples::float8 AS reltuples, obj_description(c.oid, 'pg_class') AS comment,
       pn.nspname AS parent_schema, pc.relname AS parent_name
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_inherits inh ON c.relispartition AND inh.inhrelid = c.oid
LEFT JOIN pg_class pc ON pc.oid = inh.inhparent
LEFT JOIN pg_namespace pn ON pn.oid = pc.relnamespace
WHERE ${USER_RELATIONS} AND ($1::text[] IS NULL OR n.nspname = ANY($1::text[]))
ORDER BY n.nspname, c.relname`;

/** `$1`: a chunk of relation oids (text[] of oids). */
export const COLUMNS_SQL = `
SELECT a.attrelid::int8::text AS oid, a.attnum::int AS num, a.attname AS name,
       format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable,
       pg_get_expr(d.adbin, d.adrelid) AS "default", col_description(a.attrelid, a.attnum) AS comment,
       a.atttypid::int8::text AS type_oid
FROM pg_attribute a
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum`;

export const CONSTRAINTS_SQL = `
SELECT con.conrelid::int8::text AS oid, con.conname AS name, con.contype::text AS type,
       con.conkey::int[] AS columns, rn.nspname AS ref_schema, rc.relname AS ref_table,
       con.confrelid::int8::text AS ref_oid, con.confkey::int[] AS ref_columns,
       con.confdeltype::text AS on_delete, con.confupdtype::text AS on_update,
       CASE WHEN con.contype = 'c' THEN pg_get_constraintdef(con.oid) END AS definition
FROM pg_constraint con
LEFT JOIN pg_class rc ON rc.oid = con.confrelid
LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace
WHERE con.conrelid = ANY($1::oid[]) AND con.contype IN ('p', 'u', 'f', 'c')
ORDER BY con.conrelid, con.conname`;

export const INDEXES_SQL = `
SELECT i.indrelid::int8::text AS oid, ic.relname AS name, i.indisunique AS unique, i.indisprimary AS primary,
       pg_get_indexdef(i.indexrelid) AS definition
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
WHERE i.indrelid = ANY($1::oid[])
ORDER BY i.indrelid, ic.relname`;

export const TRIGGERS_SQL = `
SELECT t.tgrelid::int8::text AS oid, t.tgname AS name, t.tgenabled <> 'D' AS enabled,
       pg_get_triggerdef(t.oid) AS definition
FROM pg_trigger t
WHERE t.tgrelid = ANY($1::oid[]) AND NOT t.tgisinternal
ORDER BY t.tgrelid, t.tgname`;

export const ENUMS_SQL = `
SELECT enumtypid::int8::text AS oid, array_agg(enumlabel::text ORDER BY enumsortorder) AS labels
FROM pg_enum GROUP BY enumtypid`;

export interface RelationRow {
  oid: string;
  schema: string;
  name: string;
  kind: string;
  reltuples: number;
  comment: string | null;
  parent_schema: string | null;
  parent_name: string | null;
}
export interface ColumnRow {
  oid: string;
  num: number;
  name: string;
  type: string;
  nullable: boolean;
  default: string | null;
  comment: string | null;
  type_oid: string;
}
export interface ConstraintRow {
  oid: string;
  name: string;
  type: string;
  columns: number[];
  ref_schema: string | null;
  ref_table: string | null;
  ref_oid: string;
  ref_columns: number[] | null;
  on_delete: string;
  on_update: string;
  definition: string | null;
}
export interface IndexRow {
  oid: string;
  name: string;
  unique: boolean;
  primary: boolean;
  definition: string;
}
export interface TriggerRow {
  oid: string;
  name: string;
  enabled: boolean;
  definition: string;
}

/** The schemas filter appended to a pg_stats query (`$1`, as RELATIONS_SQL). */
export const IN_SCHEMAS = ` AND ($1::text[] IS NULL OR n.nspname = ANY($1::text[]))`;

/** Column names of tables outside the relations read (a foreign key's target in a schema not introspected now). */
export const COLUMN_NAMES_SQL = `
SELECT a.attrelid::int8::text AS oid, a.attnum::int AS num, a.attname AS name
FROM pg_attribute a WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped`;
