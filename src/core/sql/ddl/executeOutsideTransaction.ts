/**
 * Runs an approved statement that PostgreSQL refuses inside a transaction block (SPEC §5.4a: CREATE/DROP
 * INDEX CONCURRENTLY, REINDEX … CONCURRENTLY, VACUUM, ALTER TYPE … ADD VALUE, DETACH PARTITION …
 * CONCURRENTLY): alone, on its own connection, without BEGIN, so it cannot be rolled back. When it fails,
 * the error says what it left behind and how to clean up (e.g. the INVALID index to drop).
 */
import type { Ticket } from '../../approvals/ticket';
import type { TicketStore } from '../../approvals/ticketStore';
import type { Db, DbSession } from '../../db/db';
import { DbQueryError } from '../../db/dbErrors';
import { AgentError, toAgentError } from '../../errors';
import type { Classification, StatementClassification } from '../classification';
import type { ExecuteOptions, ExecutionResult } from '../executeApproved';
import { planStatement } from './lockModel';

export interface OutsideTransactionOptions {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
}

/** True when the input holds a statement that must run outside a transaction (the classifier sends it alone). */
export function runsOutsideTransaction(statements: readonly StatementClassification[]): boolean {
  return statements.some((s) => !s.transactional);
}

/**
 * Runs the single statement with session-level timeouts (reset afterwards: the connection goes back to
 * the pool). Throws AgentError DB_QUERY_FAILED with recovery advice when it fails.
 */
export async function executeOutsideTransaction(session: DbSession, statement: StatementClassification, options: OutsideTransactionOptions): Promise<void> {
  // Invalid indexes before the run, so only what this run left behind is named afterwards.
  const before = await invalidIndexes(session);
  await session.query(`SET statement_timeout = ${Math.max(1, Math.round(options.statementTimeoutMs))}`);
  await session.query(`SET lock_timeout = ${Math.max(1, Math.round(options.lockTimeoutMs))}`);
  try {
    await session.query(statement.sql);
  } catch (error) {
    if (!(error instanceof DbQueryError)) throw error;
    const left = (await invalidIndexes(session)).filter((i) => !before.includes(i));
    throw new AgentError(
      'DB_QUERY_FAILED',
      `${error.message} (SQLSTATE ${error.sqlState}). It ran outside a transaction: nothing was rolled back.`,
      recoveryAdvice(statement, left),
      { cause: error },
    );
  } finally {
    await session.query('RESET statement_timeout');
    await session.query('RESET lock_timeout');
  }
}

/**
 * executeApproved's branch for a claimed ticket whose statement runs outside a transaction: runs it,
 * records the outcome on the ticket, and returns an execution with no undo (none is possible).
 */
export async function executeClaimedOutsideTransaction(
  db: Db,
  store: TicketStore,
  ticket: Ticket,
  classification: Classification,
  options: ExecuteOptions,
  started: number,
): Promise<ExecutionResult> {
  const statement = classification.statements[0];
  const log = { ticket: ticket.id, db: db.label };
  if (!statement || classification.statements.length !== 1) {
    const e = new AgentError('SQL_REFUSED', 'A statement that runs outside a transaction must be sent alone.');
    await store.finish(ticket.id, { ok: false, by: options.by, comment: e.message });
    throw e;
  }
  options.logger.info('executing approved statement outside a transaction', log);
  try {
    await db.withSession((session) => executeOutsideTransaction(session, statement, options));
  } catch (error) {
    const e = toAgentError(error);
    await store.finish(ticket.id, { ok: false, by: options.by, comment: `${e.message}${e.advice ? ` ${e.advice}` : ''}` }).catch((finishError: unknown) =>
      options.logger.error('could not mark the ticket failed', { ...log, error: String(finishError) }),
    );
    options.logger.warn('statement outside a transaction failed', { ...log, code: e.code, error: e.message });
    throw e;
  }
  const finished = await store.finish(ticket.id, { ok: true, by: options.by, comment: 'ran outside a transaction (cannot be rolled back)' });
  options.logger.info('statement outside a transaction done', log);
  const undo = { sql: `-- ${statement.sql}\n-- ran outside a transaction: there is no undo script.\n`, rows: 0, warnings: ['It ran outside a transaction: it cannot be undone by a script.'] };
  return { ticket: finished, tables: [], rows: 0, undo, elapsedMs: Math.round(performance.now() - started) };
}

/** What to run to clean up after a failed non-transactional statement. */
export function recoveryAdvice(statement: StatementClassification, invalidLeft: readonly string[]): string {
  const plan = planStatement(statement.sql);
  const change = plan.changes[0];
  if (invalidLeft.length > 0) {
    const drops = invalidLeft.map((i) => `DROP INDEX CONCURRENTLY ${i};`).join(' ');
    return `It left ${invalidLeft.length === 1 ? 'an INVALID index' : 'INVALID indexes'} behind (still updated by every write, never used by queries): run ${drops} then fix the cause and try again.`;
  }
  if (change?.kind === 'drop' && change.concurrent) return 'The index may be marked INVALID but still exist: run the same DROP INDEX CONCURRENTLY again.';
  if (plan.kind === 'AlterTableStmt') return 'A detach left half-done is finished with ALTER TABLE … DETACH PARTITION … FINALIZE.';
  if (plan.kind === 'VacuumStmt') return 'VACUUM changes nothing a person sees when it fails; run it again when the cause is fixed.';
  return 'Nothing was changed that needs cleaning up; fix the cause and run it again.';
}

async function invalidIndexes(session: DbSession): Promise<string[]> {
  const result = await session.query<{ name: string }>(
    `SELECT i.indexrelid::regclass::text AS name FROM pg_index i WHERE NOT i.indisvalid ORDER BY 1`,
  );
  return result.rows.map((r) => r.name);
}
