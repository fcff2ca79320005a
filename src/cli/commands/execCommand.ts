/** `pg-agent exec --ticket <id>`: runs an approved ticket's own SQL, once, and saves its undo script. */
import { AgentError } from '../../core/platform/errors';
import { executeApproved } from '../../core/sql/executeApproved';
import { readFile } from 'node:fs/promises';
import { VOID_MARK, workspaceUndoSink } from '../../core/sql/writeArtifacts';
import { workspacePaths } from '../../core/config/workspace';
import type { CliCommand } from '../command';
import { EXIT } from '../exitCodes';
import { formatCount } from '../../core/present/format';
import { renderImpact } from '../../core/present/renderImpact';
import { restoredNow, restoredPhrase } from '../../core/sql/recovery/restorePlan';
import { shownStatement } from '../../core/present/shownSql';
import type { RecoveryView } from '../../shared/impactReport';
import { cliSafety } from '../sqlInput';
import { execRefusal } from '../../core/approvals/executorRule';
import { requesterOf } from '../decider';

export const execCommand: CliCommand = {
  name: 'exec',
  summary: 'execute an approved ticket (single use; its SQL, database and approvals re-checked)',
  usage: 'pg-agent exec --ticket <id> [--force] [flags]',
  options: { ticket: { type: 'string' }, force: { type: 'boolean' }, by: { type: 'string' } },
  optionsHelp: `  --ticket ID         the approved ticket to run (on the database it was made on; no --db needed)
  --force             run a guard client's or an agent's ticket here instead (only its requester may)
  --by NAME           who runs it (default: the name of your only key, else $USER)`,
  description:
    'Runs exactly the SQL stored in the ticket, on the database the ticket names, once (a --db or --connection that\n' +
    'names another database is refused, naming both). A ticket held by the guard runs when its client retries the\n' +
    "statement, an agent's proposal by the agent (execute_approved): exec refuses those. The approvals must satisfy\n" +
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
    const stored = await store.get(id);
    if (!stored)
      throw new AgentError('APPROVAL_NOT_FOUND', `No ticket ${id}.`, 'List them with `pg-agent approvals list --all`.');
    // One executor per write: a guard client's statement runs on its retry, an agent's proposal by the agent.
    const refusal = execRefusal(stored, await requesterOf(context), args.options.force === true);
    if (refusal) throw new AgentError('APPROVAL_POLICY', refusal.message, refusal.advice);
    // The ticket knows its database; --db or --connection, when given, must name the same one.
    context.useTicketDatabase(stored.connection);
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
    // The undo of a DROP TABLE moves the table back whole (no row inserted): say what came back, counted now.
    const restores = result.ticket.impact.restores ?? [];
    const restored = restores.length > 0 ? await restoredNow(await context.openDb(), restores) : [];
    if (args.flags.json) {
      io.stdout(
        `${JSON.stringify({ status: 'executed', ticket: result.ticket.id, rows: result.rows, tables: result.tables, undoFile: result.undoFile, elapsedMs: result.elapsedMs, ...(restored.length > 0 ? { restored } : {}) })}\n`,
      );
    } else {
      // The ticket's own SQL, as it ran: hidden characters shown and flagged.
      io.stdout(
        `${shownStatement(result.ticket.sql).text}\n\n${renderImpact({ ...result.ticket.impact, tables: result.tables, exactRows: result.rows })}\n`,
      );
      // Destructive DDL run with its way back says where that is; a data change, that its undo script can be proposed.
      const kept = (result.ticket.impact.recovery ?? []).filter((r) => r.way !== 'none');
      const more = result.rows > 0 ? `; ${formatCount(result.rows)} more rows changed` : '';
      const what =
        restored.length > 0
          ? `${restored.map(restoredPhrase).join('; ')}${more},`
          : kept.length > 0
            ? `${kept.map(keptPhrase).join('; ')}${more},`
            : `${formatCount(result.rows)} rows changed`;
      // A script with statements only: a restore out of the quarantine or a DDL leaves one with none.
      const undoScript = result.undoFile && (await undoable(result.undoFile)) ? result.undoFile : undefined;
      io.stdout(
        `Executed ticket ${id}: ${what} in ${formatCount(result.elapsedMs)} ms.\n${undoScript ? `Undo script: ${undoScript}\n` : ''}`,
      );
      if (kept.length > 0)
        io.stdout(
          `Way back: kept in the quarantine for ${kept[0]?.retentionDays ?? 0} days (pg-agent quarantine list).\n  way back: pg-agent undo ${id}\n`,
        );
      else if (undoScript) io.stdout(`  way back: pg-agent undo ${id}\n`);
    }
    return EXIT.ok;
  },
};

/** "public.orders kept whole in the quarantine": a DROP or TRUNCATE kept aside deletes no row, so a count says 0. */
function keptPhrase(kept: RecoveryView): string {
  const what = kept.targets.join(', ');
  return kept.way === 'quarantine' ? `${what} kept whole in the quarantine` : `${what} copied aside first`;
}

/** Whether an undo script holds statements (not void, not only comments): `pg-agent undo` can propose it. */
async function undoable(file: string): Promise<boolean> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return !text.startsWith(VOID_MARK) && text.split('\n').some((line) => line.trim() !== '' && !line.startsWith('--'));
}
