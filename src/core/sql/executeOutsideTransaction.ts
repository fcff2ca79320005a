/**
 * Runs an approved statement that PostgreSQL refuses inside a transaction block (SPEC §5.4a: CREATE/DROP
 * INDEX CONCURRENTLY, REINDEX … CONCURRENTLY, VACUUM, ALTER TYPE … ADD VALUE, DETACH PARTITION …
 * CONCURRENTLY): alone, on its own connection, without BEGIN, so it cannot be rolled back. When it fails,
 * the error says what it left behind and how to clean up (e.g. the INVALID index to drop).
 */
import type { TicketStore } from '../approvals/ticketStore';
import type { Db, DbSession } from '../db/db';
import { DbQueryError } from '../db/dbErrors';
import { AgentError, toAgentError } from '../platform/errors';
import type { StatementClassification } from './classification';
import { authorizeAtClaim } from '../approvals/policyInForce';
import { assertNotInLedger, finishLedgerRow, LedgerRefusal, recordExecution } from '../approvals/executionLedger';
import { authorizeExecution, executionGuards } from '../approvals/signedMode';
import { OUTSIDE_TRANSACTION_XID } from '../approvals/ticket';
import type { ExecuteOptions, ExecutionResult, PeekedTicket } from './approvedTicket';
import { invalidateAfterDdl, lockWaitPolicyOf, parseTicket } from './approvedTicket';
import { classifySql } from './classify';
import { planParsed, planStatement } from './ddl/lockModel';
import { blocksOf } from './ddl/lockModes';
import { lockedStatements, lockTargetsOf, waitUntilLocksFree } from './ddl/lockWait';

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
export async function executeOutsideTransaction(
  session: DbSession,
  statement: StatementClassification,
  options: OutsideTransactionOptions,
): Promise<void> {
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
 * executeApproved's path for a ticket whose statement runs outside a transaction: claims it (policy and
 * connection checked as for any write), runs the claimed ticket's own SQL alone, records the outcome, and
 * returns an execution with no undo (none is possible). With no transaction there is no id to resolve a
 * crash from: such a ticket left EXECUTING says so (OUTSIDE_TRANSACTION_XID) instead of being guessed.
 */
export async function executeTicketOutsideTransaction(
  db: Db,
  store: TicketStore,
  ticketId: string,
  options: ExecuteOptions,
  started: number,
  peeked?: PeekedTicket,
): Promise<ExecutionResult> {
  const log = { ticket: ticketId, db: db.label };
  // Issue 25: no lock can be taken ahead outside a transaction, so it waits (polling pg_locks, requesting
  // nothing) until no session is in the way, before the ticket is claimed: if they stay, it stays unspent.
  const ticketRead = await store.get(ticketId);
  if (ticketRead?.kind === 'write' && ticketRead.status === 'APPROVED') {
    const classification = peeked?.sql === ticketRead.sql ? peeked.classification : classifySql(ticketRead.sql);
    const statements = lockedStatements(classification.statements);
    await db.withSession(async (session) =>
      waitUntilLocksFree(session, await lockTargetsOf(session, statements), lockWaitPolicyOf(options), {
        ticketId,
        logger: options.logger,
      }),
    );
  }
  const authorize = await db.withSession((session) => authorizeAtClaim(session, options));
  const guards = await db.withSession(async (session) => {
    const read = await executionGuards(session);
    if (read.ledger) await assertNotInLedger(session, ticketId);
    return read;
  });
  const ticket = await store.claim(ticketId, {
    connection: options.connection,
    xid: OUTSIDE_TRANSACTION_XID,
    by: options.by,
    // Both: in signed mode only the signatures the pinned policy counts (its refusal is the precise one), and
    // the policy in force (every layer, read now).
    authorize: (claimed) => authorizeExecution(undefined, guards.signed)(claimed) ?? authorize(claimed),
  });
  const finish = async (outcome: { ok: boolean; comment: string }) => {
    // No transaction to tie it to: the ledger row says running before the statement, then done or failed.
    if (guards.ledger)
      await db.withSession((session) => finishLedgerRow(session, ticket.id, outcome.ok ? 'done' : 'failed'));
    return store.finish(ticket.id, { ...outcome, by: options.by, xid: OUTSIDE_TRANSACTION_XID });
  };
  if (guards.ledger) {
    try {
      await db.withSession((session) =>
        recordExecution(session, ticket, { xid: null, by: options.by, status: 'running' }),
      );
    } catch (error) {
      // A reset ticket racing the execution that owns the row: that row and the ticket are not ours to touch.
      if (!(error instanceof LedgerRefusal))
        await store
          .finish(ticket.id, {
            ok: false,
            by: options.by,
            xid: OUTSIDE_TRANSACTION_XID,
            comment: toAgentError(error).message,
          })
          .catch(() => undefined);
      throw error;
    }
  }
  let statement: StatementClassification | undefined;
  try {
    const { classification } = parseTicket(ticket, peeked);
    statement = classification.statements[0];
    if (!statement || classification.statements.length !== 1)
      throw new AgentError('SQL_REFUSED', 'A statement that runs outside a transaction must be sent alone.');
    options.logger.info('executing approved statement outside a transaction', log);
    const alone = statement;
    // A lock that blocks reads or writes (VACUUM FULL) is waited for briefly; the others keep the usual wait,
    // since CREATE INDEX CONCURRENTLY also waits, under lock_timeout, for older transactions mid-build.
    const parsedAlone = peeked?.sql === ticket.sql ? peeked.parsed.statements[0] : undefined;
    const plan =
      peeked && parsedAlone ? planParsed({ statement: parsedAlone, source: peeked.parsed }) : planStatement(alone.sql);
    const blocksTraffic = plan.locks.some((l) => blocksOf(l.mode) !== 'nothing');
    const lockTimeoutMs = blocksTraffic ? lockWaitPolicyOf(options).timeoutMs : options.lockTimeoutMs;
    await db.withSession((session) => executeOutsideTransaction(session, alone, { ...options, lockTimeoutMs }));
  } catch (error) {
    const e = toAgentError(error);
    await finish({ ok: false, comment: `${e.message}${e.advice ? ` ${e.advice}` : ''}` }).catch(
      (finishError: unknown) =>
        options.logger.error('could not mark the ticket failed', { ...log, error: String(finishError) }),
    );
    options.logger.warn('statement outside a transaction failed', { ...log, code: e.code, error: e.message });
    throw e;
  }
  const undo = {
    sql: `-- ${statement.sql}\n-- ran outside a transaction: there is no undo script.\n`,
    rows: 0,
    warnings: ['It ran outside a transaction: it cannot be undone by a script.'],
  };
  const result: ExecutionResult = { ticket, tables: [], rows: 0, undo, undoFile: '', elapsedMs: 0 };
  try {
    result.ticket = await finish({ ok: true, comment: 'ran outside a transaction (cannot be rolled back)' });
  } catch (error) {
    result.outcomeNotRecorded = toAgentError(error).message;
    options.logger.error('the statement ran but its outcome could not be recorded on the ticket', {
      ...log,
      error: result.outcomeNotRecorded,
    });
  }
  options.logger.info('statement outside a transaction done', log);
  if (statement.class === 'ddl') await invalidateAfterDdl(options, log);
  result.elapsedMs = Math.round(performance.now() - started);
  return result;
}

/** What to run to clean up after a failed non-transactional statement. */
export function recoveryAdvice(statement: StatementClassification, invalidLeft: readonly string[]): string {
  const plan = planStatement(statement.sql);
  const change = plan.changes[0];
  if (invalidLeft.length > 0) {
    const drops = invalidLeft.map((i) => `DROP INDEX CONCURRENTLY ${i};`).join(' ');
    return `It left ${invalidLeft.length === 1 ? 'an INVALID index' : 'INVALID indexes'} behind (still updated by every write, never used by queries): run ${drops} then fix the cause and try again.`;
  }
  if (change?.kind === 'drop' && change.concurrent)
    return 'The index may be marked INVALID but still exist: run the same DROP INDEX CONCURRENTLY again.';
  if (plan.kind === 'AlterTableStmt')
    return 'A detach left half-done is finished with ALTER TABLE … DETACH PARTITION … FINALIZE.';
  if (plan.kind === 'VacuumStmt')
    return 'VACUUM changes nothing a person sees when it fails; run it again when the cause is fixed.';
  return 'Nothing was changed that needs cleaning up; fix the cause and run it again.';
}

async function invalidIndexes(session: DbSession): Promise<string[]> {
  const result = await session.query<{ name: string }>(
    `SELECT i.indexrelid::regclass::text AS name FROM pg_index i WHERE NOT i.indisvalid ORDER BY 1`,
  );
  return result.rows.map((r) => r.name);
}
