/** `pg-agent exec --ticket <id>`: runs an approved ticket's own SQL, once, and saves its undo script. */
import { AgentError } from '../../core/platform/errors';
import { executeApproved } from '../../core/sql/executeApproved';
import { workspaceUndoSink } from '../../core/sql/writeArtifacts';
import { workspacePaths } from '../../core/config/workspace';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { formatCount } from '../../core/present/format';
import { renderImpact } from '../../core/present/renderImpact';
import { shownStatement } from '../../core/present/shownSql';
import { cliSafety } from '../sqlInput';

export const execCommand: CliCommand = {
  name: 'exec',
  summary: 'execute an approved ticket (single use; its SQL, database and approvals re-checked)',
  usage: 'pg-agent exec --ticket <id> [flags]',
  options: { ticket: { type: 'string' } },
  optionsHelp: '  --ticket ID         the approved ticket to run',
  description:
    'Runs exactly the SQL stored in the ticket, on the database the ticket names, once. The approvals must satisfy\n' +
    'every approval policy in force for that database, read now (signatures, two persons, roles): the one pinned in\n' +
    'it, your own ~/.config/pg-agent/config.json (by database identity, URL or profile) and .pgagent/config.json\n' +
    '(which can only tighten): otherwise exit 4 with what is missing, and the ticket stays approved.',
  async run(context) {
    const { args, io } = context;
    const id = args.options.ticket;
    if (typeof id !== 'string' || id === '') {
      throw new AgentError(
        'BAD_INPUT',
        'exec needs --ticket <id>.',
        'List approved tickets with `pg-agent approvals list --status APPROVED`.',
      );
    }
    const store = await context.openTicketStore();
    const paths = workspacePaths(args.flags.workspace);
    const result = await executeApproved(await context.openDb(), store, id, {
      ...(await cliSafety(context)),
      connection: await context.connectionKey(),
      by: io.env.USER ?? 'cli-user',
      undo: workspaceUndoSink(paths.undo, id),
      logger: context.logger,
    });
    if (result.outcomeNotRecorded !== undefined) {
      io.stderr(
        `warning: the write committed, but recording that on the ticket failed (${result.outcomeNotRecorded}); it is read from the database the next time the ticket is shown.\n`,
      );
    }
    if (args.flags.json) {
      io.stdout(
        `${JSON.stringify({ status: 'executed', ticket: result.ticket.id, rows: result.rows, tables: result.tables, undoFile: result.undoFile, elapsedMs: result.elapsedMs })}\n`,
      );
    } else {
      // The ticket's own SQL, as it ran: hidden characters shown and flagged.
      io.stdout(
        `${shownStatement(result.ticket.sql).text}\n\n${renderImpact({ ...result.ticket.impact, tables: result.tables, exactRows: result.rows })}\n`,
      );
      io.stdout(
        `Executed ticket ${id}: ${formatCount(result.rows)} rows changed in ${formatCount(result.elapsedMs)} ms.\nUndo script: ${result.undoFile}\n`,
      );
      // Issue 25: destructive DDL run with its way back says where that is.
      const kept = (result.ticket.impact.recovery ?? []).filter((r) => r.way !== 'none');
      if (kept.length > 0)
        io.stdout(
          `Way back: \`pg-agent undo ${id}\` (kept in the quarantine for ${kept[0]?.retentionDays ?? 0} days; \`pg-agent quarantine list\`).\n`,
        );
    }
    return EXIT.ok;
  },
};
