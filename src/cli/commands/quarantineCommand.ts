/**
 * `pg-agent quarantine list | purge [<id>…]` (SPEC §6, issue 25): what destructive DDL left in the quarantine
 * (its size, the ticket that put it there, until when it is kept), and its end: purge is a write like any
 * other, held for approval, of the expired entries or of those named.
 */
import { AgentError } from '../../core/platform/errors';
import { listEntries } from '../../core/sql/recovery/quarantineStore';
import { proposePurge } from '../../core/sql/undoProposal';
import { saveImpactReport } from '../../core/sql/writeArtifacts';
import { workspacePaths } from '../../core/config/workspace';
import { columns } from '../../core/present/format';
import { describeSize } from '../../shared/lockPhrases';
import { visibleText } from '../../shared/visibleSql';
import type { CliCommand } from '../command';
import { requesterOf } from '../decider';
import { EXIT } from '../exitCodes';
import { printHeldProposal } from '../heldProposal';
import { cliPolicy } from '../sqlInput';

export const quarantineCommand: CliCommand = {
  name: 'quarantine',
  summary: 'list what destructive DDL left in the quarantine, or purge it (held for approval)',
  usage: 'pg-agent quarantine list | purge [<id>…] [flags]',
  options: {},
  description:
    '`list` shows each kept table, column copy or row copy with its ticket, size and expiry. `purge` without ids\n' +
    'proposes dropping the expired ones; with ids, those (before they expire). A purge is held for approval.',
  async run(context) {
    const { args, io } = context;
    const [action, ...ids] = args.positionals;
    const db = await context.openDb();
    if (action === 'list' || action === undefined) {
      if (ids.length > 0)
        throw new AgentError('BAD_INPUT', `Unexpected arguments: ${ids.join(' ')}.`, 'list takes no ids.');
      const entries = await db.withSession((session) => listEntries(session));
      if (args.flags.json) {
        io.stdout(
          `${JSON.stringify(
            entries.map(({ restoreSql: _sql, ...e }) => e),
            null,
            2,
          )}\n`,
        );
      } else if (entries.length === 0) {
        io.stdout('The quarantine is empty.\n');
      } else {
        const rows = entries.map((e) => [
          e.id,
          e.kind,
          e.original,
          describeSize(null, e.bytes).replace(/^rows unknown \(never analysed\), /, ''),
          e.ticket,
          `kept until ${e.expiresAt}`,
        ]);
        io.stdout(`${visibleText(columns([['id', 'kind', 'was', 'size', 'ticket', 'expires'], ...rows]))}\n`);
      }
      return EXIT.ok;
    }
    if (action !== 'purge')
      throw new AgentError(
        'BAD_INPUT',
        `Unknown action "${action}".`,
        'Use `pg-agent quarantine list` or `pg-agent quarantine purge [<id>…]`.',
      );
    const { settings, warnings } = await cliPolicy(context);
    const proposal = await proposePurge(
      db,
      await context.openTicketStore(),
      { ids },
      {
        connection: await context.connectionKey(),
        requestedBy: await requesterOf(context),
        settings,
        logger: context.logger,
      },
    );
    await saveImpactReport(workspacePaths(args.flags.workspace).impact, proposal.ticket);
    printHeldProposal(
      context,
      proposal,
      warnings,
      `Purge of ${proposal.entries.map((e) => `${e.id} (${e.original})`).join(', ')}`,
    );
    return EXIT.held;
  },
};
