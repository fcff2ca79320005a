/** `pg-agent exec --ticket <id>`: runs an approved ticket's exact SQL, once, and saves its undo script. */
import { AgentError } from '../../core/errors';
import { classifySql } from '../../core/sql/classify';
import { executeApproved } from '../../core/sql/executeApproved';
import { loadParser } from '../../core/sql/parse';
import { saveUndoScript } from '../../core/sql/writeArtifacts';
import { workspacePaths } from '../../core/workspace';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { formatCount } from '../format';
import { renderImpact } from '../renderImpact';
import { cliSafety } from '../sqlInput';

export const execCommand: CliCommand = {
  name: 'exec',
  summary: 'execute an approved ticket (single use; SQL and database re-checked)',
  usage: 'pg-agent exec --ticket <id> [flags]',
  options: { ticket: { type: 'string' } },
  optionsHelp: '  --ticket ID         the approved ticket to run',
  async run(context) {
    const { args, io } = context;
    const id = args.options.ticket;
    if (typeof id !== 'string' || id === '') {
      throw new AgentError('BAD_INPUT', 'exec needs --ticket <id>.', 'List approved tickets with `pg-agent approvals list --status APPROVED`.');
    }
    const store = await context.openTicketStore();
    const ticket = await store.get(id);
    if (!ticket) throw new AgentError('APPROVAL_NOT_FOUND', `No ticket ${id}.`, 'List them with `pg-agent approvals list`.');
    await loadParser();
    const classification = classifySql(ticket.sql);
    const result = await executeApproved(
      await context.openDb(),
      store,
      { ticketId: id, sql: ticket.sql, connection: await context.connectionKey(), classification },
      { ...(await cliSafety(context)), by: io.env.USER ?? 'cli-user', logger: context.logger },
    );
    const undoFile = await saveUndoScript(workspacePaths(args.flags.workspace).undo, id, result.undo);
    if (args.flags.json) {
      io.stdout(`${JSON.stringify({ status: 'executed', ticket: result.ticket.id, rows: result.rows, tables: result.tables, undoFile, elapsedMs: result.elapsedMs })}\n`);
    } else {
      io.stdout(`${renderImpact({ ...ticket.impact, tables: result.tables, exactRows: result.rows })}\n`);
      io.stdout(`Executed ticket ${id}: ${formatCount(result.rows)} rows changed in ${formatCount(result.elapsedMs)} ms.\nUndo script: ${undoFile}\n`);
    }
    return EXIT.ok;
  },
};
