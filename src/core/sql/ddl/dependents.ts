/**
 * What depends on the objects a statement changes, from pg_depend (SPEC §5.4a): views and materialized
 * views (through their rewrite rules, followed transitively as CASCADE does), foreign keys of other
 * tables, triggers, policies, and SQL-standard function bodies; and what that means for the statement
 * (dropped by CASCADE, makes the DROP fail, blocks a type change, follows a rename).
 */
import type { DbSession } from '../../db/db';
import { quoteQualified } from '../tableEffects';
import type { DdlChange } from './ddlPlan';

export interface Dependent {
  kind: string;
  name: string;
  effect: string;
}

export interface DependentsResult {
  dependents: Dependent[];
  /** A failure the dependents make certain (DROP without CASCADE, type change under a view). */
  wouldFail: null | { code: string; message: string };
}

interface Row {
  kind: string;
  name: string;
  oid: number;
  auto: boolean;
}

/** Views on views: how deep CASCADE is followed (each level is one catalog query). */
const MAX_DEPTH = 5;

export async function findDependents(session: DbSession, changes: readonly DdlChange[]): Promise<DependentsResult> {
  const dependents: Dependent[] = [];
  let wouldFail: DependentsResult['wouldFail'] = null;
  for (const change of changes) {
    if (
      change.kind === 'drop' &&
      ['OBJECT_TABLE', 'OBJECT_VIEW', 'OBJECT_MATVIEW', 'OBJECT_FOREIGN_TABLE'].includes(change.objectType)
    ) {
      for (const object of change.objects) {
        const rows = await dependentsOf(session, object, null, true);
        const blocking = rows.filter((r) => !r.auto);
        for (const r of rows) {
          dependents.push({
            kind: r.kind,
            name: r.name,
            effect: r.auto
              ? 'dropped with it'
              : change.cascade
                ? r.kind === 'foreign key'
                  ? 'dropped by CASCADE (its table stays)'
                  : 'dropped by CASCADE'
                : 'makes the DROP fail: drop it first or add CASCADE',
          });
        }
        if (!change.cascade && blocking[0] && wouldFail === null) {
          wouldFail = {
            code: '2BP01',
            message: `cannot drop ${object} because other objects depend on it (${blocking.map((b) => `${b.kind} ${b.name}`).join(', ')})`,
          };
        }
      }
    } else if (change.kind === 'dropColumn' || change.kind === 'alterType' || change.kind === 'rename') {
      const column = change.kind === 'rename' ? change.column : change.column;
      const rows = await dependentsOf(session, change.table, column, change.kind === 'dropColumn' && change.cascade);
      for (const r of rows.filter((x) => !x.auto)) {
        const effect =
          change.kind === 'rename'
            ? 'keeps working (it refers by OID); SQL in clients or functions that names the old name breaks'
            : change.kind === 'alterType'
              ? r.kind === 'view' || r.kind === 'materialized view' || r.kind === 'rule'
                ? 'makes the type change fail: drop and re-create it around the change'
                : 'is rechecked or rebuilt with the new type'
              : change.cascade
                ? 'dropped by CASCADE'
                : 'makes the DROP COLUMN fail: drop it first or add CASCADE';
        dependents.push({ kind: r.kind, name: r.name, effect });
        if (
          wouldFail === null &&
          change.kind === 'alterType' &&
          (r.kind === 'view' || r.kind === 'materialized view' || r.kind === 'rule')
        ) {
          wouldFail = {
            code: '0A000',
            message: `cannot alter type of a column used by a view or rule (${r.kind} ${r.name} depends on column "${change.column}")`,
          };
        }
        if (wouldFail === null && change.kind === 'dropColumn' && !change.cascade) {
          wouldFail = {
            code: '2BP01',
            message: `cannot drop column ${change.column} of table ${change.table} because other objects depend on it (${r.kind} ${r.name})`,
          };
        }
      }
    }
  }
  return { dependents: dedupe(dependents), wouldFail };
}

/**
 * Objects that depend on a relation (or one of its columns): normal dependencies (what blocks a DROP),
 * plus the triggers and policies that go with the table (auto). Views are followed transitively when
 * `transitive` (what CASCADE would also drop).
 */
async function dependentsOf(
  session: DbSession,
  relation: string,
  column: string | null,
  transitive: boolean,
): Promise<Row[]> {
  const found: Row[] = [];
  const seen = new Set<number>();
  let frontier: { oid: number | null; name: string; column: string | null }[] = [{ oid: null, name: relation, column }];
  for (let depth = 0; depth < MAX_DEPTH && frontier.length > 0; depth++) {
    const next: typeof frontier = [];
    for (const item of frontier) {
      const result = await session.query<Row>(DEPENDENTS_SQL, [
        item.oid === null ? quoteQualified(item.name) : null,
        item.oid,
        item.column,
      ]);
      for (const row of result.rows) {
        if (seen.has(row.oid)) continue;
        seen.add(row.oid);
        found.push(row);
        if (transitive && (row.kind === 'view' || row.kind === 'materialized view'))
          next.push({ oid: row.oid, name: row.name, column: null });
      }
    }
    frontier = next;
  }
  return found;
}

/** $1 relation name (or null with $2 its oid), $3 column name or null for the whole relation. */
const DEPENDENTS_SQL = `
WITH target AS (
  SELECT COALESCE(to_regclass($1)::oid, $2::int8::oid) AS oid
), att AS (
  SELECT a.attnum FROM pg_attribute a, target t WHERE a.attrelid = t.oid AND a.attname = $3
), deps AS (
  SELECT DISTINCT d.classid, d.objid, d.deptype
  FROM pg_depend d, target t
  WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = t.oid
    AND ($3::text IS NULL OR d.refobjsubid = (SELECT attnum FROM att))
    AND (d.deptype = 'n' OR (d.deptype = 'a' AND d.classid IN ('pg_trigger'::regclass, 'pg_policy'::regclass)))
)
SELECT kind, name, oid, auto FROM (
  SELECT CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' ELSE 'rule' END AS kind,
         c.oid::regclass::text AS name, c.oid::int8::float8 AS oid, false AS auto
  FROM deps JOIN pg_rewrite r ON deps.classid = 'pg_rewrite'::regclass AND r.oid = deps.objid
  JOIN pg_class c ON c.oid = r.ev_class, target t WHERE c.oid <> t.oid
  UNION ALL
  SELECT CASE con.contype WHEN 'f' THEN 'foreign key' ELSE 'constraint' END,
         quote_ident(con.conname) || ' on ' || con.conrelid::regclass::text, con.oid::int8::float8, false
  FROM deps JOIN pg_constraint con ON deps.classid = 'pg_constraint'::regclass AND con.oid = deps.objid, target t
  WHERE con.conrelid <> t.oid
  UNION ALL
  SELECT 'trigger', quote_ident(tg.tgname) || ' on ' || tg.tgrelid::regclass::text, tg.oid::int8::float8, deps.deptype = 'a'
  FROM deps JOIN pg_trigger tg ON deps.classid = 'pg_trigger'::regclass AND tg.oid = deps.objid WHERE NOT tg.tgisinternal
  UNION ALL
  SELECT 'policy', quote_ident(p.polname) || ' on ' || p.polrelid::regclass::text, p.oid::int8::float8, deps.deptype = 'a'
  FROM deps JOIN pg_policy p ON deps.classid = 'pg_policy'::regclass AND p.oid = deps.objid
  UNION ALL
  SELECT 'function', pr.oid::regprocedure::text, pr.oid::int8::float8, false
  FROM deps JOIN pg_proc pr ON deps.classid = 'pg_proc'::regclass AND pr.oid = deps.objid
) x ORDER BY kind, name`;

function dedupe(list: Dependent[]): Dependent[] {
  const seen = new Set<string>();
  return list.filter((d) => {
    const key = `${d.kind}|${d.name}|${d.effect}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
