/**
 * Who stands between an approved DDL statement and its lock (SPEC §5.6, issue 25): the sessions that hold,
 * or already wait for, a lock on the tables involved that conflicts with the mode the statement needs, with
 * what a DBA asks first (pid, user, state and for how long, the query). Reads pg_locks and
 * pg_stat_activity only; takes no lock.
 */
import type { DbSession } from '../../db/db';
import type { LockHolderView } from '../../../shared/impactReport';
import type { LockMode } from './lockModes';
import { conflicts, fromPgLocksMode } from './lockModes';

/** A table and the lock mode a statement needs on it. */
export interface LockTarget {
  oid: number;
  /** "schema.name" */
  table: string;
  mode: LockMode;
}

export type LockHolder = LockHolderView;

interface HolderRow {
  pid: number | null;
  mode: string;
  granted: boolean;
  relation: number;
  user: string | null;
  application: string | null;
  state: string | null;
  state_seconds: number | null;
  xact_seconds: number | null;
  query: string | null;
}

const QUERY_CHARS = 160;

/**
 * Sessions holding or awaiting a lock that conflicts with each target's mode, one entry per session and
 * table (the strongest conflicting mode), holders before waiters, the longest-running first.
 */
export async function sessionsInTheWay(session: DbSession, targets: readonly LockTarget[]): Promise<LockHolder[]> {
  if (targets.length === 0) return [];
  const result = await session.query<HolderRow>(
    `SELECT l.pid, l.mode, l.granted, l.relation::int8::float8 AS relation,
            a.usename::text AS "user", a.application_name AS application, a.state,
            extract(epoch FROM clock_timestamp() - a.state_change)::float8 AS state_seconds,
            extract(epoch FROM clock_timestamp() - a.xact_start)::float8 AS xact_seconds,
            left(regexp_replace(a.query, '\\s+', ' ', 'g'), ${QUERY_CHARS + 1}) AS query
     FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'relation' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND l.relation = ANY($1::int8[]::oid[]) AND l.pid IS DISTINCT FROM pg_backend_pid()`,
    [targets.map((t) => t.oid)],
  );
  const found = new Map<string, LockHolder>();
  for (const row of result.rows) {
    const held = fromPgLocksMode(row.mode);
    const target = targets.find((t) => t.oid === row.relation && held !== undefined && conflicts(held, t.mode));
    // pg_locks and pg_stat_activity are read at different instants: a session already idle (outside any
    // transaction) holds no lock any more; it was a short query caught in passing.
    if (!target || !held || row.state === 'idle') continue;
    const key = `${row.pid ?? 'prepared'}\u0000${target.table}`;
    const seen = found.get(key);
    // A session both holding and awaiting locks on the table is shown as a holder (that is what blocks).
    if (seen && (seen.granted || !row.granted)) continue;
    found.set(key, {
      pid: row.pid,
      table: target.table,
      mode: held,
      granted: row.granted,
      user: row.user,
      application: row.application === '' ? null : row.application,
      state: row.pid === null ? 'prepared transaction' : row.state,
      stateSeconds: row.state_seconds === null ? null : Math.max(0, Math.round(row.state_seconds)),
      transactionSeconds: row.xact_seconds === null ? null : Math.max(0, Math.round(row.xact_seconds)),
      query:
        row.query === null ? null : row.query.length > QUERY_CHARS ? `${row.query.slice(0, QUERY_CHARS)}…` : row.query,
    });
  }
  return [...found.values()].sort(
    (a, b) => Number(b.granted) - Number(a.granted) || (b.transactionSeconds ?? 0) - (a.transactionSeconds ?? 0),
  );
}
