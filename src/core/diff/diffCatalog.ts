/**
 * A database's structure for a schema diff, read in one READ ONLY transaction: tables and columns through the
 * project's introspection (introspectSchema), and what it does not describe (schemas, enums, sequences,
 * constraints by name, indexes that back no constraint, views) by our own catalog queries, one each.
 */
import type { DbSession } from '../db/db';
import { introspectSchema } from '../db/introspect';
import { NOT_EXTENSION, readRoutinesAndGrants, USER_SCHEMA } from './diffCatalogRoutines';
import type { DiffConstraint, DiffEnum, DiffIndex, DiffSequence, DiffSnapshot, DiffView } from './diffSnapshot';
import { SNAPSHOT_FORMAT } from './diffSnapshot';

/** Schemas of the database's users: not PostgreSQL's, nor pg-agent's own (quarantine, signed mode, ledger). */
const ours = (schema: string) => schema === 'pgagent' || schema.startsWith('pgagent_');

const SCHEMAS_SQL = `SELECT n.nspname AS name FROM pg_namespace n WHERE ${USER_SCHEMA} AND ${NOT_EXTENSION('pg_namespace', 'n.oid')} ORDER BY 1`;

const ENUMS_SQL = `
SELECT n.nspname AS schema, t.typname AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace JOIN pg_enum e ON e.enumtypid = t.oid
WHERE ${USER_SCHEMA} AND ${NOT_EXTENSION('pg_type', 't.oid')}
GROUP BY 1, 2 ORDER BY 1, 2`;

// Identity columns' sequences come with their column (deptype 'i'): not listed on their own.
const SEQUENCES_SQL = `
SELECT n.nspname AS schema, c.relname AS name, format_type(s.seqtypid, NULL) AS type,
       s.seqstart::text AS start, s.seqincrement::text AS increment
FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE ${USER_SCHEMA} AND ${NOT_EXTENSION('pg_class', 'c.oid')}
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'i')
ORDER BY 1, 2`;

const CONSTRAINTS_SQL = `
SELECT n.nspname AS schema, c.relname AS table, con.conname AS name, con.contype::text AS type,
       pg_get_constraintdef(con.oid) AS definition
FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE ${USER_SCHEMA} AND c.relkind IN ('r', 'p') AND con.contype IN ('p', 'u', 'c', 'f', 'x') AND con.conislocal
  AND ${NOT_EXTENSION('pg_class', 'c.oid')}
ORDER BY 1, 2, 3`;

const INDEXES_SQL = `
SELECT n.nspname AS schema, t.relname AS table, i.relname AS name, pg_get_indexdef(i.oid) AS definition
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE ${USER_SCHEMA} AND t.relkind IN ('r', 'p', 'm') AND ${NOT_EXTENSION('pg_class', 't.oid')}
  AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = x.indexrelid AND con.contype IN ('p', 'u', 'x'))
  AND NOT EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = i.oid)
ORDER BY 1, 2, 3`;

// In creation order (oid), so a view is made after the views it reads in the usual case.
const VIEWS_SQL = `
SELECT n.nspname AS schema, c.relname AS name, c.relkind = 'm' AS materialized, pg_get_viewdef(c.oid) AS definition
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE ${USER_SCHEMA} AND c.relkind IN ('v', 'm') AND ${NOT_EXTENSION('pg_class', 'c.oid')}
ORDER BY c.oid`;

/** The structure of every user schema of the session's database. */
export async function readDiffSnapshot(session: DbSession): Promise<DiffSnapshot> {
  await session.query('BEGIN READ ONLY');
  try {
    const introspected = await introspectSchema(session, { valueWords: false });
    const schemas = await session.query<{ name: string }>(SCHEMAS_SQL);
    const enums = await session.query<DiffEnum>(ENUMS_SQL);
    const sequences = await session.query<DiffSequence>(SEQUENCES_SQL);
    const constraints = await session.query<DiffConstraint>(CONSTRAINTS_SQL);
    const indexes = await session.query<DiffIndex>(INDEXES_SQL);
    const views = await session.query<DiffView>(VIEWS_SQL);
    const routines = await readRoutinesAndGrants(session);
    const stored = introspected.tables.filter(
      (t) => (t.kind === 'table' || t.kind === 'partitioned_table') && !ours(t.schema),
    );
    return {
      format: SNAPSHOT_FORMAT,
      version: 1,
      database: introspected.database,
      schemas: schemas.rows.map((r) => r.name),
      enums: enums.rows,
      sequences: sequences.rows,
      tables: stored.map((t) => ({
        schema: t.schema,
        name: t.name,
        partitioned: t.kind === 'partitioned_table',
        columns: t.columns.map((c) => {
          const identity = routines.identities.get(`${t.schema}\u0000${t.name}\u0000${c.name}`);
          return {
            name: c.name,
            type: c.type,
            nullable: c.nullable,
            default: c.default,
            ...(identity ? { identity } : {}),
          };
        }),
      })),
      constraints: constraints.rows,
      indexes: indexes.rows,
      views: views.rows,
      functions: routines.functions,
      triggers: routines.triggers,
      grants: routines.grants,
    };
  } finally {
    await session.query('ROLLBACK');
  }
}
