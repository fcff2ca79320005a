/**
 * The rules that keep a preview from hurting production (SPEC §5.4a: no preview blocks another session's
 * reads or writes for more than 250 ms): who already holds or awaits a conflicting lock (then the preview
 * does not even queue: a queued ACCESS EXCLUSIVE makes every later reader wait), the lock and statement
 * timeouts that bound a preview holding a blocking lock, and the relfilenode check that confirms a rewrite.
 */
import type { DbSession } from '../../db/db';
import type { LockMode } from './lockModes';
import { conflicts, fromPgLocksMode } from './lockModes';

/** SPEC §5.4a's bound on how long a preview may block another session's reads or writes. */
export const PREVIEW_BLOCK_BOUND_MS = 250;
/** How long a preview waits for a lock (it blocks later requests while it waits). */
export const PREVIEW_LOCK_WAIT_MS = 50;
/**
 * How long a transaction holding a blocking lock may run before it is stopped: the bound minus the lock
 * wait and a margin for the ROLLBACK's round trip and the statistics read before it.
 */
export const PREVIEW_BLOCKING_BUDGET_MS = PREVIEW_BLOCK_BOUND_MS - PREVIEW_LOCK_WAIT_MS - 30;

export interface LockWaiter {
  pid: number;
  mode: LockMode;
  granted: boolean;
}

/**
 * Sessions that hold, or wait for, a lock on the table that conflicts with `mode`: a lock request would
 * queue behind every one of them. Reads pg_locks only (no lock taken).
 */
export async function conflictingSessions(session: DbSession, tableOid: number, mode: LockMode): Promise<LockWaiter[]> {
  const result = await session.query<{ pid: number; mode: string; granted: boolean }>(
    `SELECT pid, mode, granted FROM pg_locks
     WHERE locktype = 'relation' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND relation = $1::int8::oid AND pid <> pg_backend_pid()`,
    [tableOid],
  );
  const waiters: LockWaiter[] = [];
  for (const row of result.rows) {
    const held = fromPgLocksMode(row.mode);
    if (held && conflicts(held, mode) && !waiters.some((w) => w.pid === row.pid))
      waiters.push({ pid: row.pid, mode: held, granted: row.granted });
  }
  return waiters;
}

/** "waits behind 2 sessions (pid 812 holds ACCESS SHARE, pid 901 waits for SHARE)" */
export function describeWaiters(waiters: readonly LockWaiter[]): string {
  const who = waiters.map((w) => `pid ${w.pid} ${w.granted ? 'holds' : 'waits for'} ${w.mode}`).join(', ');
  return `waits behind ${waiters.length} session${waiters.length === 1 ? '' : 's'} (${who})`;
}

/** The sessions blocking `pid` right now (pg_blocking_pids), for a preview that ran into its lock timeout. */
export async function blockersOf(session: DbSession, tableOid: number): Promise<number> {
  const result = await session.query<{ n: number }>(
    `SELECT count(DISTINCT pid)::int AS n FROM pg_locks
     WHERE locktype = 'relation' AND relation = $1::int8::oid AND granted AND pid <> pg_backend_pid()`,
    [tableOid],
  );
  return result.rows[0]?.n ?? 0;
}
