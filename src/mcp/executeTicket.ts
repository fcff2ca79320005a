/**
 * The one place the MCP server (and the VS Code language-model tools) execute a ticket: today exactly
 * what `pg-agent exec --ticket` does: the ticket's own SQL, parsed again from the ticket, claimed once,
 * re-checked against the database it was approved for; the undo script saved beside the others.
 */
import { AgentError } from '../core/platform/errors';
import type { TableEffect } from '../shared/impactReport';
import { executeApproved } from '../core/sql/executeApproved';
import { workspaceUndoSink } from '../core/sql/writeArtifacts';
import { workspacePaths } from '../core/config/workspace';
import type { McpToolContext } from './toolContext';

/** `pg-agent exec --ticket <id> --json`. */
export interface TicketExecution {
  status: 'executed';
  ticket: string;
  rows: number;
  tables: TableEffect[];
  undoFile: string;
  elapsedMs: number;
}

export async function executeTicket(context: McpToolContext, ticketId: string): Promise<TicketExecution> {
  const store = await context.openTicketStore();
  if (!(await store.get(ticketId)))
    throw new AgentError('APPROVAL_NOT_FOUND', `No ticket ${ticketId}.`, 'Use the ticket id propose_write returned.');
  const result = await executeApproved(await context.openDb(), store, ticketId, {
    ...context.settings,
    connection: await context.connectionKey(),
    by: context.executedBy,
    undo: workspaceUndoSink(workspacePaths(context.workspaceDir).undo, ticketId),
    logger: context.logger,
  });
  if (result.outcomeNotRecorded !== undefined) {
    context.logger.warn('the write committed but its outcome could not be recorded on the ticket', {
      ticket: ticketId,
      error: result.outcomeNotRecorded,
    });
  }
  return {
    status: 'executed',
    ticket: result.ticket.id,
    rows: result.rows,
    tables: result.tables,
    undoFile: result.undoFile,
    elapsedMs: result.elapsedMs,
  };
}
