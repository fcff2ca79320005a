/**
 * The one place the MCP server (and the VS Code language-model tools) execute a ticket: today exactly
 * what `pg-agent exec --ticket` does: the ticket's own SQL, parsed again from the ticket, claimed once,
 * re-checked against the database it was approved for; the undo script saved beside the others.
 */
import { AgentError } from '../core/errors';
import type { TableEffect } from '../core/sql/impactReport';
import { classifySql } from '../core/sql/classify';
import { executeApproved } from '../core/sql/executeApproved';
import { loadParser } from '../core/sql/parse';
import { saveUndoScript } from '../core/sql/writeArtifacts';
import { workspacePaths } from '../core/workspace';
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
  const ticket = await store.get(ticketId);
  if (!ticket) throw new AgentError('APPROVAL_NOT_FOUND', `No ticket ${ticketId}.`, 'Use the ticket id propose_write returned.');
  await loadParser();
  const result = await executeApproved(
    await context.openDb(),
    store,
    { ticketId, sql: ticket.sql, connection: await context.connectionKey(), classification: classifySql(ticket.sql) },
    { ...context.settings, by: context.executedBy, logger: context.logger },
  );
  const undoFile = await saveUndoScript(workspacePaths(context.workspaceDir).undo, ticketId, result.undo);
  return { status: 'executed', ticket: result.ticket.id, rows: result.rows, tables: result.tables, undoFile, elapsedMs: result.elapsedMs };
}
