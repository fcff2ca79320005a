/**
 * An exact fingerprint of the database's code (SPEC §5 1a): count and sum of xmin of every catalog row the
 * code catalog (codeCatalogSql.ts) is read from. Any CREATE, ALTER, CREATE OR REPLACE or DROP of a function,
 * trigger, rule, policy, event trigger, default, operator, cast, type, constraint, index or relation writes
 * such a row in its own transaction, so the very next check sees a new version. xmin, not statistics
 * counters: those reach other sessions up to seconds late, and an attacker's CREATE OR REPLACE FUNCTION must
 * be seen at once. Style of src/core/db/schemaVersion.ts.
 *
 * pg_class rows of every user relation kind stand in for two larger catalogs: a new or dropped index, an
 * identity's sequence, a partition attached (relpartbound) or RLS turned on all write the pg_class row, and a
 * column changed to a domain with checks or to another base type is a table rewrite (a new relfilenode), so
 * pg_index and pg_attribute (tens of thousands of rows on a big schema) need not be scanned.
 */
import type { DbSession } from '../../db/db';

/** count.sum(xmin) of a catalog's rows matching `where`. */
const part = (table: string, where = 'true'): string =>
  `(SELECT count(*) || '.' || coalesce(sum(xmin::text::int8), 0) FROM ${table} WHERE ${where})`;

// Objects created after initdb have oids >= 16384 (FirstNormalObjectId): every user and extension object.
const USER = 'oid >= 16384';

export const CODE_VERSION_SQL = `SELECT concat_ws(':',
  ${part('pg_proc', USER)},
  ${part('pg_trigger')},
  ${part('pg_rewrite', USER)},
  ${part('pg_policy')},
  ${part('pg_event_trigger')},
  ${part('pg_attrdef')},
  ${part('pg_operator', USER)},
  ${part('pg_cast', USER)},
  ${part('pg_type', USER)},
  ${part('pg_constraint', USER)},
  ${part('pg_inherits')},
  ${part('pg_class', USER)},
  ${part('pg_extension')}
) AS version`;

export async function codeVersion(session: DbSession): Promise<string> {
  const result = await session.query<{ version: string }>(CODE_VERSION_SQL);
  return result.rows[0]?.version ?? '';
}
