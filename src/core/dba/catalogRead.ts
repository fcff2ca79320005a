/**
 * Our own catalog and statistics reads for the DBA tools (SPEC §6 `health`, `top`, `indexes`): fixed SQL we
 * wrote, never a person's or a model's text, each in its own BEGIN READ ONLY with SET LOCAL statement_timeout and
 * lock_timeout (the read path's settings), rolled back. One failing read (a privilege, a missing view) aborts
 * only its own transaction, so the next check on the same connection still runs.
 */
import type { DbSession, Db } from '../db/db';
import { setLocalTimeouts } from '../sql/runRead';

export interface CatalogLimits {
  /** Per read; a check that takes longer is reported as "could not run", never waited for. */
  statementTimeoutMs: number;
  lockTimeoutMs: number;
}

export const DEFAULT_CATALOG_LIMITS: CatalogLimits = { statementTimeoutMs: 5000, lockTimeoutMs: 250 };

/** Runs reads of ours on one connection; `queries` counts what was sent (for the bench). */
export interface CatalogReader {
  read: <Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]) => Promise<Row[]>;
  readonly queries: number;
}

/** Holds one connection for `work`; each `read` is its own READ ONLY transaction on it. */
export async function withCatalogReader<T>(
  db: Db,
  limits: CatalogLimits,
  work: (reader: CatalogReader) => Promise<T>,
): Promise<T> {
  return db.withSession(async (session) => work(catalogReader(session, limits)));
}

export function catalogReader(session: DbSession, limits: CatalogLimits): CatalogReader {
  let queries = 0;
  return {
    get queries() {
      return queries;
    },
    async read<Row>(sql: string, params?: readonly unknown[]): Promise<Row[]> {
      queries++;
      await session.query('BEGIN READ ONLY');
      try {
        await setLocalTimeouts(session, limits.statementTimeoutMs, limits.lockTimeoutMs);
        const result = await session.query<Row>(sql, params);
        return result.rows;
      } finally {
        await session.query('ROLLBACK');
      }
    },
  };
}
