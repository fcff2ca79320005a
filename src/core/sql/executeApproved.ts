/**
 * Executes an approved write (SPEC §5.6): claims the ticket (single use; its SQL re-checked against its
 * hash, the connection and the approval policy at this moment, with the transaction id recorded on it),
 * parses and runs the ticket's own SQL in that one transaction, compares the actual per-table effects with
 * the approved preview and rolls back when they exceed it beyond a tolerance (the data changed since
 * review), writes the undo script before COMMIT, commits, and records the outcome.
 *
 * Exactly once under crashes: the ticket is EXECUTING with the transaction's id from the moment it is
 * claimed, so if this process dies anywhere after that, any later read of the ticket resolves it from
 * pg_xact_status() to what really happened (see resolveExecuting.ts); it is never run twice.
 */
import { authorizeAtClaim } from '../approvals/policyInForce';
import { assertNotInLedger, LedgerRefusal, recordExecution } from '../approvals/executionLedger';
import { authorizeExecution, executionGuards } from '../approvals/signedMode';
import { isGuardTransaction } from '../approvals/ticket';
import type { Ticket } from '../approvals/ticket';
import type { TicketStore } from '../approvals/ticketStore';
import type { Db, DbSession, DbTextResult } from '../db/db';
import { AgentError, toAgentError } from '../platform/errors';
import { durableXidOf } from './durableXid';
import { loadParser } from './parse';
import { setLocalTimeouts } from './runRead';
import type { ChangedTable } from './tableEffects';
import { attributeEffects, diffStats, readXactStats, resolveTables } from './tableEffects';
import { installUndoCapture, UNDO_CAPTURE_TRIGGER } from './undoCapture';
import { executeTicketOutsideTransaction, runsOutsideTransaction } from './executeOutsideTransaction';
import type { ExecuteOptions, ExecutionResult, TicketStatements } from './approvedTicket';
import { invalidateAfterDdl, lockWaitPolicyOf, parseTicket, peekTicket } from './approvedTicket';
import { isLockTimeout, lockedStatements, lockNotForeseen, lockTargetsOf, takeLocksBriefly } from './ddl/lockWait';
import { outsideQuarantine } from './recovery/quarantineStore';
import { runWithRecovery } from './recovery/runWithRecovery';

export async function executeApproved(
  db: Db,
  store: TicketStore,
  ticketId: string,
  options: ExecuteOptions,
): Promise<ExecutionResult> {
  const { history } = options;
  if (!history) return executeOnce(db, store, ticketId, options);
  const startedAt = Date.now();
  try {
    const result = await executeOnce(db, store, ticketId, options);
    const { ticket, elapsedMs: ms, rows } = result;
    history.record(db.label, {
      kind: 'write',
      sql: ticket.sql,
      startedAt,
      ms,
      rows,
      ticket: ticket.id,
      who: options.by,
    });
    return result;
  } catch (error) {
    // Recorded when the ticket's write was tried: a refusal before its claim ran nothing.
    const ticket = await store.get(ticketId).catch(() => undefined);
    if (ticket?.execution) {
      const ms = Date.now() - startedAt;
      const run = { kind: 'write' as const, sql: ticket.sql, startedAt, ms, rows: null, ticket: ticketId };
      history.record(db.label, { ...run, who: options.by, error: toAgentError(error).message });
    }
    throw error;
  }
}

async function executeOnce(
  db: Db,
  store: TicketStore,
  ticketId: string,
  options: ExecuteOptions,
): Promise<ExecutionResult> {
  const started = performance.now();
  await loadParser();
  // Issue 10 (SPEC §5.4a): a statement PostgreSQL runs only outside a transaction runs alone, without BEGIN.
  // The peek only picks the path; that path claims the ticket and runs the claimed ticket's SQL, whose parse
  // is the peek's only when it is the same text (parseTicket).
  const ticketRead = await store.get(ticketId);
  if (ticketRead && isGuardTransaction(ticketRead)) {
    throw new AgentError(
      'SQL_REFUSED',
      `Ticket ${ticketId} holds a client transaction through pg-agent guard: a replay of its recorded values would be wrong (ids it returned were used later).`,
      'The client runs the same transaction again through the guard: it commits once, within the approved rows.',
    );
  }
  const peeked = ticketRead ? peekTicket(ticketRead, options.parsed) : undefined;
  if (peeked && runsOutsideTransaction(peeked.classification.statements)) {
    return executeTicketOutsideTransaction(db, store, ticketId, options, started, peeked);
  }
  const log = { ticket: ticketId, db: db.label };
  const outcome = await db.withSession(async (session) => {
    // The policy in force is read now, for this database (SPEC §5 3a), not taken from start-up.
    const authorize = await authorizeAtClaim(session, options);
    await session.query('BEGIN');
    let ticket: Ticket | undefined;
    let undoFile: string | undefined;
    let schemaChanged = false;
    try {
      // Signed mode and the ledger are read from this database, now: never from the ticket or the workspace.
      const guards = await executionGuards(session);
      if (guards.ledger) await assertNotInLedger(session, ticketId);
      // Issue 25: approved DDL takes its table locks first, in short tries, before the ticket is claimed: when
      // others hold them, it stops here with the ticket unspent, and no one ever queued behind it for long.
      const ddlAhead =
        peeked && ticketRead?.status === 'APPROVED' ? lockedStatements(peeked.classification.statements) : [];
      if (ddlAhead.length > 0) {
        const waited = await takeLocksBriefly(
          session,
          await lockTargetsOf(session, ddlAhead),
          lockWaitPolicyOf(options),
          { logger: options.logger, ticketId },
        );
        if (waited.attempts > 1) options.logger.info('approved DDL got its locks after retries', { ...log, ...waited });
      }
      // The transaction id exists before the claim, so the ticket is never EXECUTING without one.
      // Durable in the WAL first: after a crash restart no later transaction can have this id (durableXid.ts).
      const { xid } = await durableXidOf(session, db);
      ticket = await store.claim(ticketId, {
        connection: options.connection,
        xid,
        by: options.by,
        // Both: in signed mode only the signatures the pinned policy counts (its refusal is the precise one), and
        // the policy in force (every layer, read now).
        authorize: (claimed) => authorizeExecution(undefined, guards.signed)(claimed) ?? authorize(claimed),
      });
      // In the write's own transaction: it commits with the write, or neither happens.
      if (guards.ledger) await recordExecution(session, ticket, { xid, by: options.by, status: 'done' });
      options.logger.info('executing approved write', { ...log, xid });
      const statements = parseTicket(ticket, peeked);
      schemaChanged = statements.classification.statements.some((st) => st.class === 'ddl');
      // A lock the model did not foresee is not waited for long either: approved DDL never queues others for seconds.
      await setLocalTimeouts(
        session,
        options.statementTimeoutMs,
        ddlAhead.length > 0 ? lockWaitPolicyOf(options).timeoutMs : options.lockTimeoutMs,
      );
      const capture = await installUndoCapture(
        session,
        ticket.impact.tables.map((t) => `${t.schema}.${t.name}`),
      );
      const before = await readXactStats(session);
      const { directRelids, results } = await runTicketStatements(session, statements, ticket);
      // What the way back keeps (issue 25) is not a change of the data that was approved.
      const changed = outsideQuarantine(diffStats(before, await readXactStats(session)));
      const exceeded = measuredBeforeApproval(ticket) ? compareWithApproved(changed, ticket, options.tolerance) : [];
      if (exceeded.length > 0) {
        throw new AgentError(
          'IMPACT_EXCEEDED',
          `Rolled back: the write changed more than was approved (${exceeded.join('; ')}).`,
          'The data changed since the review. Look at the impact again and approve the new numbers if they are right.',
        );
      }
      const effects = await attributeEffects(session, changed, directRelids, [UNDO_CAPTURE_TRIGGER]);
      const undo = await capture.buildScript();
      await capture.remove();
      // Before COMMIT, so a committed write always has its undo script.
      undoFile = await options.undo.save(
        undo,
        `-- Undo of ticket ${ticket.id} (transaction ${xid}). Valid only if the ticket is EXECUTED: pg-agent approvals show ${ticket.id}\n`,
      );
      ticket = await store.noteUndo(ticket.id, xid, undoFile);
      const done = { ticket, xid, tables: effects.tables, undo, undoFile, schemaChanged, results };
      try {
        await session.query('COMMIT');
      } catch (commitError) {
        return { ...done, commitError };
      }
      return done;
    } catch (error) {
      const rolledBack = await session.query('ROLLBACK').then(
        () => true,
        () => false,
      );
      const e = toAgentError(error);
      // Not claimed (refused by policy, already used, ...): nothing ran and nothing is ours to record.
      if (ticket?.status !== 'EXECUTING' || !ticket.execution) throw e;
      // Claimed only because the ticket was reset: its ledger row belongs to the execution that ran it.
      if (error instanceof LedgerRefusal) throw e;
      // Issue 25: a lock the model did not foresee, not free within the short wait. The rollback is confirmed and
      // nothing committed, so the approval is not spent: the ticket goes back to APPROVED (if the store can).
      if (rolledBack && undoFile === undefined && isLockTimeout(error) && store.release) {
        const released = await store
          .release(ticket.id, { ok: false, by: options.by, xid: ticket.execution.xid, comment: e.message })
          .catch((releaseError: unknown) => {
            options.logger.error('could not release the claim of a ticket whose lock was not free', {
              ...log,
              error: String(releaseError),
            });
            return undefined;
          });
        if (released)
          throw await lockNotForeseen(
            session,
            parseTicket(released).classification.statements,
            lockWaitPolicyOf(options),
            ticket.id,
            e,
          );
      }
      if (undoFile !== undefined) {
        await options.undo
          .markVoid(undoFile, `transaction ${ticket.execution.xid} did not commit: ${e.message}`)
          .catch((voidError: unknown) =>
            options.logger.error('could not mark an undo script void', {
              ...log,
              file: undoFile,
              error: String(voidError),
            }),
          );
      }
      await store
        .finish(ticket.id, { ok: false, by: options.by, comment: e.message, xid: ticket.execution.xid })
        .catch((finishError: unknown) =>
          // The ticket stays EXECUTING with its transaction id; the next read resolves it to FAILED.
          options.logger.error('could not mark the ticket failed', { ...log, error: String(finishError) }),
        );
      options.logger.warn('approved write rolled back', { ...log, code: e.code, error: e.message });
      throw e;
    }
  });
  if ('commitError' in outcome) await settleFailedCommit(db, store, outcome, options);
  const rows = outcome.tables.reduce((sum, t) => sum + t.inserted + t.updated + t.deleted, 0);
  const result: ExecutionResult = {
    ticket: outcome.ticket,
    tables: outcome.tables,
    rows,
    undo: outcome.undo,
    undoFile: outcome.undoFile,
    elapsedMs: 0,
    results: outcome.results,
  };
  try {
    result.ticket = await store.finish(outcome.ticket.id, {
      ok: true,
      by: options.by,
      comment: `${rows} rows changed`,
      xid: outcome.xid,
    });
  } catch (error) {
    // Committed is committed: a store that fails now must never turn the write into "failed" anywhere.
    result.outcomeNotRecorded = toAgentError(error).message;
    options.logger.error('the write committed but its outcome could not be recorded on the ticket', {
      ...log,
      error: result.outcomeNotRecorded,
    });
  }
  options.logger.info('approved write committed', { ...log, rows });
  if (outcome.schemaChanged) await invalidateAfterDdl(options, log);
  result.elapsedMs = Math.round(performance.now() - started);
  return result;
}

/**
 * Runs the ticket's statements inside the open transaction and returns the tables they write directly,
 * and what each statement returned (its RETURNING rows as PostgreSQL's text, for a client that waits for
 * them: the guard). One step on its own, so statements that must run outside a transaction can get their
 * own branch here.
 */
async function runTicketStatements(
  session: DbSession,
  statements: TicketStatements,
  ticket: Ticket,
): Promise<{ directRelids: number[]; results: (DbTextResult | undefined)[] }> {
  const directRelids: number[] = [];
  const results: (DbTextResult | undefined)[] = [];
  for (const [index, statement] of statements.classification.statements.entries()) {
    directRelids.push(...(await resolveTables(session, statement.writesTo)));
    // A destructive statement approved with a way back runs with it (quarantine or copy first); issue 25.
    const recovery = ticket.impact.recovery?.find((r) => r.statement === index);
    if (recovery) {
      await runWithRecovery(session, ticket, statement, index, recovery);
      results.push(undefined);
    } else results.push(await session.queryText(statement.sql));
  }
  return { directRelids, results };
}

/**
 * COMMIT answered with an error: either it really failed (a deferred constraint) or the answer was lost
 * with the connection. Its fate is read from the database rather than guessed: committed goes on as
 * executed; aborted is recorded as failed (undo voided) and raised; unknown leaves the ticket EXECUTING.
 */
async function settleFailedCommit(
  db: Db,
  store: TicketStore,
  outcome: { ticket: Ticket; xid: string; undoFile: string; commitError: unknown },
  options: ExecuteOptions,
): Promise<void> {
  const e = toAgentError(outcome.commitError);
  let status: string | undefined;
  try {
    status = await db.withSession(async (session) => {
      const result = await session.query<{ status: string | null }>('SELECT pg_xact_status($1::text::xid8) AS status', [
        outcome.xid,
      ]);
      return result.rows[0]?.status ?? undefined;
    });
  } catch (error) {
    options.logger.warn('could not read the fate of a failed COMMIT', {
      ticket: outcome.ticket.id,
      xid: outcome.xid,
      error: String(error),
    });
  }
  if (status === 'committed') return;
  if (status === 'aborted') {
    await options.undo
      .markVoid(outcome.undoFile, `transaction ${outcome.xid} did not commit: ${e.message}`)
      .catch(() => undefined);
    await store
      .finish(outcome.ticket.id, {
        ok: false,
        by: options.by,
        comment: `COMMIT failed: ${e.message}`,
        xid: outcome.xid,
      })
      .catch(() => undefined);
    throw new AgentError('DB_QUERY_FAILED', `COMMIT failed, nothing was changed: ${e.message}`, undefined, {
      cause: outcome.commitError,
    });
  }
  throw new AgentError(
    'DB_QUERY_FAILED',
    `The answer to COMMIT of transaction ${outcome.xid} was lost (${e.message}); whether the write happened is not known yet.`,
    `\`pg-agent approvals show ${outcome.ticket.id}\` reads it from the database once it can be reached; do not run the SQL again by hand.`,
    { cause: outcome.commitError },
  );
}

/**
 * Whether the person approved exact counts. A write that could not be previewed (it calls code whose effects a
 * rollback does not undo, or its preview was stopped so as not to block other sessions) was approved as "not
 * measured" with that said in its impact: there are no approved counts to exceed, so comparing with none would
 * roll back every such write after its unrollbackable effects had happened. Its real effects are reported.
 */
function measuredBeforeApproval(ticket: Ticket): boolean {
  return ticket.impact.previewed !== false || ticket.impact.exactRows !== null;
}

/** "orders: 12 deleted, approved 10" for every table and kind of change beyond the tolerance. */
export function compareWithApproved(changed: readonly ChangedTable[], ticket: Ticket, tolerance: number): string[] {
  const approved = new Map<string, { inserted: number; updated: number; deleted: number }>();
  for (const t of ticket.impact.tables) {
    const key = `${t.schema}.${t.name}`;
    const a = approved.get(key) ?? { inserted: 0, updated: 0, deleted: 0 };
    approved.set(key, {
      inserted: a.inserted + t.inserted,
      updated: a.updated + t.updated,
      deleted: a.deleted + t.deleted,
    });
  }
  const problems: string[] = [];
  for (const c of changed) {
    const key = `${c.schema}.${c.name}`;
    const a = approved.get(key) ?? { inserted: 0, updated: 0, deleted: 0 };
    for (const kind of ['inserted', 'updated', 'deleted'] as const) {
      const allowed = a[kind] + Math.ceil(a[kind] * tolerance);
      if (c[kind] > allowed) problems.push(`${key}: ${c[kind]} ${kind}, approved ${a[kind]}`);
    }
  }
  return problems;
}
