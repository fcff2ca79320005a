/**
 * A statement that is not a read, sent through the guard outside a transaction (SPEC §5 3, 6, 8): the
 * same impact preview and the same ticket store as every other path; once a person approved the ticket,
 * the identical text sent again (by any guard client) runs once through core/sql/executeApproved.ts
 * (claim, re-check, impact drift guard, ledger, undo script). A retry before the decision finds the same
 * ticket instead of opening another. Each new ticket is also left as a proposal file, so VS Code shows it
 * with its CodeLens like an MCP agent's; approved there, VS Code runs it, and the client's next identical
 * statement is told it ran (CommandComplete) instead of opening a new ticket.
 */
import type { Ticket } from '../../core/approvals/ticket';
import { sqlHash } from '../../core/approvals/ticket';
import { writeProposal } from '../../core/approvals/proposalFiles';
import { workspacePaths } from '../../core/config/workspace';
import { toAgentError } from '../../core/platform/errors';
import type { Classification, StatementClassification } from '../../core/sql/classification';
import type { CheckedSql } from '../../core/sql/reach/checkSql';
import { executeApproved } from '../../core/sql/executeApproved';
import type { ExecutionResult } from '../../core/sql/approvedTicket';
import { analyzeImpact } from '../../core/sql/impact';
import { liveStatementTickets, liveTicketsOf, pendingOrNewTicket } from '../../core/sql/pendingTicket';
import { forgetReach } from '../../core/sql/reach/reachOf';
import { workspaceUndoSink } from '../../core/sql/writeArtifacts';
import type { GuardContext } from '../guardContext';
import { heldText } from './heldPasswords';
import { passwordNotice } from '../../core/sql/secrets/hidePasswords';

export type HoldOutcome =
  | { kind: 'held'; ticket: Ticket; reused: boolean }
  /** `results`: what each statement returned on the executor (RETURNING rows), when it ran here. */
  | { kind: 'executed'; ticket: Ticket; tags: string[]; results?: ExecutionResult['results'] }
  | { kind: 'refused'; message: string; hint?: string };

/**
 * The newest ticket this guard held for each statement (by its connection and SQL hash) whose client has not
 * been told of its run or rejection yet (kept in memory: after a restart the identical text is a new write,
 * the safe side).
 */
export type AwaitingClients = Map<string, string>;

/** Holds `sql` on a ticket, or runs it when its identical text's ticket is approved. */
export async function holdOrRun(
  context: GuardContext,
  typedSql: string,
  typedClassification: Classification,
  requestedBy: string,
  awaiting: AwaitingClients,
  /** The check of exactly `typedSql` (its parse), carried here so that nothing below parses it again. */
  checked?: CheckedSql,
): Promise<HoldOutcome> {
  const store = await context.openTicketStore();
  const connection = await context.connectionKey();
  // Asked by key (never a listing of every ticket). A statement that sets a password is kept as its SCRAM
  // verifier (heldPasswords.ts): its earlier tickets are found by its text with the passwords left out, and their
  // salts reused, so an identical retry becomes the identical text.
  const held = await heldText(
    () => context.openDb(),
    typedSql,
    typedClassification,
    async (key) => (await liveStatementTickets(store, connection, key)).map((t) => t.sql),
    checked?.sql === typedSql ? checked.parsed : undefined,
  );
  const { sql, classification } = held;
  // The parse of exactly the SQL held: the client's (carried) or, for a password rewritten, heldText's.
  const parsed = held.parsed ?? (checked?.sql === sql ? checked.parsed : undefined);
  const hash = sqlHash(sql);
  const awaitKey = `${connection} ${hash}`;
  // The same lookup as every surface's (core/sql/pendingTicket.ts): a held transaction's ticket is never this
  // statement's, even with the same text.
  const same = await liveTicketsOf(store, {
    connection,
    sql,
    ...(held.matchKey !== undefined ? { matchKey: held.matchKey } : {}),
  });
  // Two tickets of one statement (two guards holding it at once): an approved one runs, once.
  const live = same.find((t) => t.status === 'APPROVED');
  if (live) {
    try {
      const result = await executeApproved(await context.openDb(), store, live.id, {
        ...context.settings,
        connection,
        by: `${context.executedBy} for ${requestedBy}`,
        undo: workspaceUndoSink(workspacePaths(context.workspaceDir).undo, live.id),
        logger: context.logger,
        ...(parsed ? { parsed } : {}),
      });
      // It may have changed the database's code: the next check asks for the version again.
      forgetReach(await context.openDb());
      if (awaiting.get(awaitKey) === live.id) awaiting.delete(awaitKey);
      context.logger.info('guard ran an approved statement', { ticket: live.id, rows: result.rows, by: requestedBy });
      return {
        kind: 'executed',
        ticket: result.ticket,
        tags: commandTags(classification.statements, result),
        ...(result.results ? { results: result.results } : {}),
      };
    } catch (error) {
      const e = toAgentError(error);
      return {
        kind: 'refused',
        message: `Ticket ${live.id} was approved but did not run: ${e.message}`,
        ...(e.advice ? { hint: e.advice } : {}),
      };
    }
  }
  // The ticket this guard held for it last, when no longer live: approved and run elsewhere (VS Code runs what
  // it approves) since this guard held it, that was this retry's run; rejected, the client is told so.
  const heldHere = same.length === 0 ? awaiting.get(awaitKey) : undefined;
  const last = heldHere ? await store.get(heldHere) : undefined;
  // Run by another retry through a guard (two clients, or two guards, sent it at once): that retry got the
  // result; this one is told it ran once already, never that it ran now.
  if (last?.status === 'EXECUTED' && last.execution?.by.startsWith(context.executedBy)) {
    awaiting.delete(awaitKey);
    return {
      kind: 'refused',
      message: `Ticket ${last.id} for this statement already ran, for another client's retry (${last.execution.by}); an approval runs once.`,
      hint: 'Send the statement again for a new review if it must run again.',
    };
  }
  if (last?.status === 'EXECUTED') {
    awaiting.delete(awaitKey);
    context.logger.info('guard reports a statement run elsewhere', { ticket: last.id, by: requestedBy });
    return {
      kind: 'executed',
      ticket: last,
      tags: commandTags(classification.statements, { tables: last.impact.tables }),
    };
  }
  if (last?.status === 'REJECTED') {
    const decision = last.decisions.at(-1);
    return {
      kind: 'refused',
      message: `Rejected: ticket ${last.id} for this statement was rejected${decision ? ` by ${decision.by}${decision.comment ? ` ("${decision.comment}")` : ''}` : ''}.`,
      hint: 'Change the statement to get a new review, or ask the person who rejected it.',
    };
  }
  const impact = await analyzeImpact(
    await context.openDb(),
    classification,
    context.settings,
    parsed ? { parsed } : undefined,
  );
  if (held.passwordsSet.length > 0) impact.warnings.unshift(passwordNotice(held.passwordsSet));
  // A retry before the decision finds its pending ticket (any guard client's: one ticket per statement), its
  // impact measured again: the same, it stands; changed, a new ticket replaces it.
  const { ticket, reused } = await pendingOrNewTicket(
    store,
    {
      sql,
      connection,
      impact,
      createdBy: requestedBy,
      ...(held.matchKey !== undefined ? { matchKey: held.matchKey } : {}),
    },
    { anyRequester: true },
  );
  awaiting.set(awaitKey, ticket.id);
  if (reused) return { kind: 'held', ticket, reused: true };
  await writeProposal(
    context.workspaceDir,
    ticket.id,
    sql,
    requestedBy,
    'sent through pg-agent guard; the client gets its result when it sends the identical statement again',
  ).catch((error: unknown) =>
    context.logger.warn('could not write the proposal file of a held statement', {
      ticket: ticket.id,
      error: String(error),
    }),
  );
  context.logger.info('guard held a statement', { ticket: ticket.id, risk: impact.risk, by: requestedBy });
  return { kind: 'held', ticket, reused: false };
}

const DML_VERB: Record<string, string> = {
  InsertStmt: 'INSERT 0',
  UpdateStmt: 'UPDATE',
  DeleteStmt: 'DELETE',
  MergeStmt: 'MERGE',
};

/**
 * One CommandComplete tag per statement, as PostgreSQL would send: a DML statement's count is PostgreSQL's
 * own when it ran here, else the rows its own target table changed (cascades and triggers elsewhere are not
 * in PostgreSQL's count either).
 */
export function commandTags(
  statements: readonly StatementClassification[],
  result: Pick<ExecutionResult, 'tables' | 'results'>,
): string[] {
  return statements.map((statement, index) => {
    const verb = DML_VERB[statement.kind];
    const counted = result.results?.[index]?.rowCount;
    if (verb !== undefined && typeof counted === 'number') return `${verb} ${counted}`;
    if (verb === undefined)
      return statement.sql
        .split(/\s+/)
        .slice(
          0,
          statement.kind.startsWith('Create') || statement.kind.startsWith('Drop') || statement.kind.startsWith('Alter')
            ? 2
            : 1,
        )
        .join(' ')
        .toUpperCase();
    const direct = result.tables.filter(
      (t) => t.via === 'direct' && statement.writesTo.some((w) => w === t.name || w === `${t.schema}.${t.name}`),
    );
    const rows = direct.reduce((sum, t) => sum + t.inserted + t.updated + t.deleted, 0);
    return `${verb} ${rows}`;
  });
}
