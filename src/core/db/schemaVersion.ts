/**
 * A cheap fingerprint of a database's DDL: the transaction ids that last wrote the catalog rows of user
 * relations, columns, constraints, indexes, triggers and comments. Any DDL (and ANALYZE, which rewrites
 * row estimates) changes it; reading it costs one small query instead of a full introspection.
 */
import type { DbSession } from './db';

const VERSION_SQL = `
WITH rels AS (
  SELECT c.oid, c.xmin FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
)
SELECT concat_ws(':',
  (SELECT count(*) || '.' || coalesce(sum(xmin::text::int8), 0) FROM rels),
  (SELECT count(*) || '.' || coalesce(sum(a.xmin::text::int8), 0) FROM pg_attribute a WHERE a.attrelid IN (SELECT oid FROM rels)),
  (SELECT count(*) || '.' || coalesce(sum(k.xmin::text::int8), 0) FROM pg_constraint k WHERE k.conrelid IN (SELECT oid FROM rels)),
  (SELECT count(*) || '.' || coalesce(sum(i.xmin::text::int8), 0) FROM pg_index i WHERE i.indrelid IN (SELECT oid FROM rels)),
  (SELECT count(*) || '.' || coalesce(sum(t.xmin::text::int8), 0) FROM pg_trigger t WHERE t.tgrelid IN (SELECT oid FROM rels)),
  (SELECT count(*) || '.' || coalesce(sum(d.xmin::text::int8), 0) FROM pg_description d WHERE d.objoid IN (SELECT oid FROM rels))
) AS version`;

export async function schemaVersion(session: DbSession): Promise<string> {
  const result = await session.query<{ version: string }>(VERSION_SQL);
  return result.rows[0]?.version ?? '';
}

/** The catalogs DDL writes, by their fixed OIDs (pg_class, pg_attribute, pg_constraint, pg_index, pg_trigger, pg_description). */
const DDL_CATALOGS = [1259, 1249, 2606, 2610, 2620, 2609];

/**
 * The activity counters of the catalog tables DDL writes (about 0.3 ms to read): unchanged counters
 * mean, in practice, no DDL since the last look. Statistics reach other sessions with a delay (up to
 * a few seconds) and PGlite keeps none, so this only shortens the wait between full version checks.
 * Fixed OIDs and no array, cast or aggregate: the first query of a new connection loads few catalog entries.
 */
export async function catalogActivity(session: DbSession): Promise<string> {
  const counts = DDL_CATALOGS.map(
    (oid) =>
      `(pg_stat_get_tuples_inserted(${oid}) + pg_stat_get_tuples_updated(${oid}) + pg_stat_get_tuples_deleted(${oid}))::text`,
  );
  const result = await session.query<{ activity: string }>(`SELECT ${counts.join(" || '.' || ")} AS activity`);
  return result.rows[0]?.activity ?? '';
}

const SCHEMA_VERSIONS_SQL = `
WITH rels AS (
  SELECT c.oid, c.xmin, n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
), objects AS (
  SELECT oid AS rel, xmin FROM rels
  UNION ALL SELECT a.attrelid, a.xmin FROM pg_attribute a WHERE a.attrelid IN (SELECT oid FROM rels)
  UNION ALL SELECT k.conrelid, k.xmin FROM pg_constraint k WHERE k.conrelid IN (SELECT oid FROM rels)
  UNION ALL SELECT i.indrelid, i.xmin FROM pg_index i WHERE i.indrelid IN (SELECT oid FROM rels)
  UNION ALL SELECT t.tgrelid, t.xmin FROM pg_trigger t WHERE t.tgrelid IN (SELECT oid FROM rels)
  UNION ALL SELECT d.objoid, d.xmin FROM pg_description d WHERE d.objoid IN (SELECT oid FROM rels)
)
SELECT r.nspname AS schema, count(*) || '.' || sum(o.xmin::text::int8) AS version
FROM objects o JOIN rels r ON r.oid = o.rel GROUP BY r.nspname`;

/**
 * The same fingerprint per schema (one query): the schema cache re-reads only the schemas whose version
 * moved, and forgets those that are gone.
 */
export async function schemaVersions(session: DbSession): Promise<Map<string, string>> {
  const result = await session.query<{ schema: string; version: string }>(SCHEMA_VERSIONS_SQL);
  return new Map(result.rows.map((r) => [r.schema, r.version]));
}

/**
 * Counters that never moved (all zero) mean no statistics are kept (track_counts off, PGlite): they say
 * nothing, and the version decides every time.
 */
export function activityTrusted(activity: string): boolean {
  return activity !== '' && activity.split('.').some((n) => n !== '0');
}
