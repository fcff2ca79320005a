/**
 * An exact fingerprint of the database's code (SPEC §5 1a): count and sum of xmin of every catalog row the
 * code catalog (codeCatalogSql.ts) is read from. Any CREATE, ALTER, CREATE OR REPLACE or DROP of a function,
 * trigger, rule, policy, event trigger, default, operator, cast, type, operator class member, constraint,
 * index or relation writes such a row in its own transaction, so the very next check sees a new version.
 * xmin, not statistics counters: those reach other sessions up to seconds late, and an attacker's
 * CREATE OR REPLACE FUNCTION must be seen at once. Style of src/core/db/schemaVersion.ts.
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

const FINGERPRINT_SQL = `SELECT concat_ws(':',
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
  ${part('pg_amproc', USER)},
  ${part('pg_amop', USER)},
  ${part('pg_class', USER)},
  ${part('pg_extension')}
)`;

/**
 * The fingerprint is skipped when the server's transaction snapshot (xmin:xmax:in-progress xids) is the one
 * seen last time: then no transaction has ended since, so no catalog row can have changed (every catalog
 * change needs a transaction id, and one ending either leaves the in-progress list or moves xmax). Exact,
 * and nearly free on a quiet database; on a busy one the snapshot moves and the fingerprint is read.
 */
export const CODE_VERSION_SQL = `SELECT pg_current_snapshot()::text AS snapshot,
  CASE WHEN pg_current_snapshot()::text = $1 THEN NULL ELSE (${FINGERPRINT_SQL}) END AS version`;

export interface CodeVersion {
  snapshot: string;
  version: string;
}

/** The code version, one small query; `previous` lets an unchanged snapshot skip the fingerprint. */
export async function codeVersion(session: DbSession, previous?: CodeVersion): Promise<CodeVersion> {
  const result = await session.query<{ snapshot: string; version: string | null }>(CODE_VERSION_SQL, [
    previous?.snapshot ?? '',
  ]);
  const row = result.rows[0];
  const snapshot = row?.snapshot ?? '';
  if (row?.version === null && previous) return { snapshot, version: previous.version };
  return { snapshot, version: row?.version ?? '' };
}
