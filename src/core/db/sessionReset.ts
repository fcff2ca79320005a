/**
 * A session leaves nothing behind (SPEC §5 4): before its connection serves anyone else, DISCARD ALL releases
 * session-level advisory locks, resets every setting, drops temporary objects, closes cursors and forgets
 * prepared statements — whatever the database's own code did during a read or a preview. A transaction the
 * work left open is rolled back first. A connection that cannot be reset is not reused (the caller's cue).
 */
import type { DbSession } from './db';
import { DbQueryError } from './dbErrors';
import type { OneAtATime } from './oneAtATime';

/** Resets the session; returns the error when the connection could not be reset (it must then be dropped). */
export async function resetSession(session: DbSession): Promise<Error | undefined> {
  try {
    try {
      await session.query('DISCARD ALL');
    } catch (error) {
      // 25001: the work left its transaction open (or aborted); end it, then reset.
      if (!(error instanceof DbQueryError) || error.sqlState !== '25001') throw error;
      await session.query('ROLLBACK');
      await session.query('DISCARD ALL');
    }
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * A session of a database with one connection (PGlite, here or in a worker): it holds the connection through
 * `queue` so no other caller's statement lands inside its transaction, and resets it after.
 */
export function withOnlySession<T>(
  queue: OneAtATime,
  session: DbSession,
  work: (session: DbSession) => Promise<T>,
): Promise<T> {
  return queue.run(async () => {
    try {
      return await work(session);
    } finally {
      // One connection for everyone: what a read or preview left (locks, settings) must not stay.
      await resetSession(session);
    }
  });
}
