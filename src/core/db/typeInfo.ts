/** Names and shapes of PostgreSQL types by OID, looked up once per database and kept. */
import type { DbSession } from './db';

export interface TypeInfo {
  oid: number;
  /** format_type(): "integer", "numeric", "timestamp with time zone", "text[]". */
  name: string;
  /** pg_type.typcategory: 'A' array, 'N' numeric, 'B' boolean, ... */
  category: string;
  /** Element type of an array type (0 otherwise). */
  elem: number;
  /** Array element delimiter (',' for all but box). */
  delim: string;
}

/** Fills `cache` with the types of `oids` it does not hold yet (and their element types), in one query. */
export async function lookupTypes(
  session: DbSession,
  oids: readonly number[],
  cache: Map<number, TypeInfo>,
): Promise<Map<number, TypeInfo>> {
  const missing = [...new Set(oids)].filter((oid) => !cache.has(oid));
  if (missing.length === 0) return cache;
  const result = await session.query<{ oid: number; name: string; category: string; elem: number; delim: string }>(
    `SELECT t.oid::int AS oid, format_type(t.oid, NULL) AS name, t.typcategory::text AS category,
            t.typelem::int AS elem, t.typdelim::text AS delim
     FROM pg_type t
     WHERE t.oid = ANY($1::oid[])
        OR t.oid IN (SELECT typelem FROM pg_type WHERE oid = ANY($1::oid[]))`,
    [missing],
  );
  for (const row of result.rows) cache.set(row.oid, row);
  return cache;
}
