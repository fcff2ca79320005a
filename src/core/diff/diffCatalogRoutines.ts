/**
 * The parts of a diff snapshot past tables and indexes, one catalog query each: functions and procedures (their
 * whole definition), triggers, privileges (tables, views, sequences, schemas, functions: the explicit ones and the
 * defaults a NULL ACL stands for, the owner's own left out) and identity columns.
 */
import type { DbSession } from '../db/db';
import type { DiffFunction, DiffGrant, DiffTrigger } from './diffSnapshot';

/** Schemas of the database's users (as diffCatalog.ts reads them), on the namespace alias n. */
export const USER_SCHEMA = `n.nspname NOT IN ('pg_catalog', 'information_schema', 'pgagent') AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname NOT LIKE 'pgagent\\_%'`;
/** Objects an extension made are the extension's, not the schema's: CREATE EXTENSION brings them. */
export const NOT_EXTENSION = (classId: string, oid: string) =>
  `NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = '${classId}'::regclass AND d.objid = ${oid} AND d.deptype = 'e')`;

// In creation order (oid): a function is made after those it was made after in B.
const FUNCTIONS_SQL = `
SELECT n.nspname AS schema, p.proname AS name, pg_get_function_identity_arguments(p.oid) AS args,
       p.prokind::text AS kind, l.lanname AS language, pg_get_function_result(p.oid) AS result,
       pg_get_functiondef(p.oid) AS definition
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
WHERE ${USER_SCHEMA} AND p.prokind IN ('f', 'p') AND ${NOT_EXTENSION('pg_proc', 'p.oid')}
ORDER BY p.oid`;

const TRIGGERS_SQL = `
SELECT n.nspname AS schema, c.relname AS table, t.tgname AS name, pg_get_triggerdef(t.oid) AS definition
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE ${USER_SCHEMA} AND NOT t.tgisinternal AND t.tgparentid = 0 AND ${NOT_EXTENSION('pg_class', 'c.oid')}
ORDER BY 1, 2, 3`;

const grantee = `CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END`;
const GRANTS_SQL = `
SELECT CASE WHEN c.relkind = 'S' THEN 'sequence' ELSE 'table' END AS kind, n.nspname AS schema, c.relname AS name,
       '' AS args, ${grantee} AS grantee, a.privilege_type AS privilege, a.is_grantable AS grantable
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
     aclexplode(coalesce(c.relacl, acldefault(CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END::"char", c.relowner))) a
WHERE ${USER_SCHEMA} AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND a.grantee <> c.relowner
  AND ${NOT_EXTENSION('pg_class', 'c.oid')}
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'i')
UNION ALL
SELECT 'schema', n.nspname, n.nspname, '', ${grantee}, a.privilege_type, a.is_grantable
FROM pg_namespace n, aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a
WHERE ${USER_SCHEMA} AND a.grantee <> n.nspowner AND ${NOT_EXTENSION('pg_namespace', 'n.oid')}
UNION ALL
SELECT 'function', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid), ${grantee}, a.privilege_type,
       a.is_grantable
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace,
     aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
WHERE ${USER_SCHEMA} AND p.prokind IN ('f', 'p') AND a.grantee <> p.proowner AND ${NOT_EXTENSION('pg_proc', 'p.oid')}
ORDER BY 1, 2, 3, 4, 5, 6`;

const IDENTITY_SQL = `
SELECT n.nspname AS schema, c.relname AS table, a.attname AS column, a.attidentity::text AS identity
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE ${USER_SCHEMA} AND a.attidentity <> '' AND NOT a.attisdropped AND a.attnum > 0`;

export interface RoutinesAndGrants {
  functions: DiffFunction[];
  triggers: DiffTrigger[];
  grants: DiffGrant[];
  /** schema \\0 table \\0 column → its identity kind. */
  identities: Map<string, 'a' | 'd'>;
}

export async function readRoutinesAndGrants(session: DbSession): Promise<RoutinesAndGrants> {
  const functions = await session.query<DiffFunction>(FUNCTIONS_SQL);
  const triggers = await session.query<DiffTrigger>(TRIGGERS_SQL);
  const grants = await session.query<DiffGrant>(GRANTS_SQL);
  const identities = await session.query<{ schema: string; table: string; column: string; identity: 'a' | 'd' }>(
    IDENTITY_SQL,
  );
  return {
    functions: functions.rows,
    triggers: triggers.rows,
    grants: grants.rows,
    identities: new Map(identities.rows.map((r) => [`${r.schema}\u0000${r.table}\u0000${r.column}`, r.identity])),
  };
}
