/**
 * The id of the transaction that runs an approved write, made durable before a ticket records it.
 *
 * PostgreSQL rebuilds its next transaction id from the WAL after a crash: an id it handed out but never wrote
 * to the WAL (a transaction that took its id and had written nothing durable yet) is given out again after a
 * crash restart. Recorded as it was, the id of a write whose executor died with the server would later read
 * the fate of someone else's transaction from pg_xact_status(), and a ticket could be marked EXECUTED for a
 * write that never committed. So the id is put in the WAL (a transactional logical message: any role may
 * write one, at any wal_level) and the WAL is flushed past it (a commit on another session of the same server
 * flushes everything written before it) before the claim; from then on no later transaction can have this id.
 */
import type { Db, DbSession } from '../db/db';
import { AgentError } from '../platform/errors';

/** One round trip: the id, and the WAL position of the message that carries it (null when not allowed). */
const XID_IN_WAL = `SELECT pg_catalog.pg_current_xact_id()::text AS xid,
  CASE WHEN has_function_privilege(to_regprocedure('pg_logical_emit_message(boolean,text,text)'), 'EXECUTE')
    THEN pg_catalog.pg_logical_emit_message(true, 'pg-agent', 'executing an approved write')::text END AS lsn`;

/** A query run as the transaction that is about to be claimed (a DbSession, or the guard's in-band query). */
export type XidQuery = (sql: string) => Promise<{ xid: string | null; lsn: string | null } | undefined>;

/**
 * The transaction's id, durable in the WAL. `flushOn` is the server the transaction runs on (a pool that can
 * open a second session), undefined for the embedded sample database (no server to crash, one connection).
 * When the role may not write the message, the id is returned as before and `durable` says so.
 */
export async function durableXid(query: XidQuery, flushOn: Db | undefined): Promise<{ xid: string; durable: boolean }> {
  if (!flushOn) {
    const row = await query('SELECT pg_catalog.pg_current_xact_id()::text AS xid, NULL::text AS lsn');
    return { xid: required(row?.xid), durable: false };
  }
  const row = await query(XID_IN_WAL);
  const xid = required(row?.xid);
  if (!row?.lsn) return { xid, durable: false };
  // A transaction of its own that writes WAL (a commit that wrote none is never waited for), committed with
  // synchronous_commit on: the commit waits for the WAL flush up to its record, after the message above.
  await flushOn.withSession(async (session) => {
    await session.query('BEGIN');
    try {
      await session.query('SET LOCAL synchronous_commit = on');
      await session.query("SELECT pg_catalog.pg_logical_emit_message(true, 'pg-agent', 'flush')");
      await session.query('COMMIT');
    } catch (error) {
      await session.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
  return { xid, durable: true };
}

/** durableXid over a DbSession of `db`. */
export function durableXidOf(session: DbSession, db: Db): Promise<{ xid: string; durable: boolean }> {
  return durableXid(
    async (sql) => (await session.query<{ xid: string | null; lsn: string | null }>(sql)).rows[0],
    db.kind === 'postgres' ? db : undefined,
  );
}

function required(xid: string | null | undefined): string {
  if (!xid) throw new AgentError('INTERNAL', 'PostgreSQL did not give the transaction an id.');
  return xid;
}
