/**
 * Which database this is, however it was reached (SPEC §5 3a): the server's system identifier (from
 * pg_control_system(), the same for every host alias, port forward or URL spelling of one cluster) plus the
 * database's name. Policies, pins and the execution ledger are keyed by it, never by a URL or a path.
 */
import type { DbSession } from './db';

export interface DatabaseIdentity {
  /** pg_control_system().system_identifier, as text (an int8). */
  systemIdentifier: string;
  database: string;
  /** "7712163443514398832/shop": the key policies and pins are stored under. */
  key: string;
}

export async function databaseIdentity(session: DbSession): Promise<DatabaseIdentity> {
  const result = await session.query<{ system_identifier: string; database: string }>(
    'SELECT system_identifier::text AS system_identifier, current_database() AS database FROM pg_control_system()',
  );
  const row = result.rows[0];
  if (!row) throw new Error('pg_control_system() returned no row.');
  return {
    systemIdentifier: row.system_identifier,
    database: row.database,
    key: `${row.system_identifier}/${row.database}`,
  };
}
