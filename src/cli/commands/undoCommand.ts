/**
 * `pg-agent undo <ticket>` (SPEC §6, issue 25): the way back from an executed ticket, itself a write held for
 * approval. For destructive DDL it is the SQL that puts back what the quarantine kept; for a data change, the
 * ticket's undo script. Nothing is restored until a person approves exactly that SQL.
 */
import { AgentError } from '../../core/platform/errors';
import { saveImpactReport } from '../../core/sql/writeArtifacts';
import { proposeUndo } from '../../core/sql/undoProposal';
import { workspacePaths } from '../../core/config/workspace';
import type { CliCommand } from '../command';
import { requesterOf } from '../decider';
import { EXIT } from '../exitCodes';
import { printHeldProposal } from '../heldProposal';
import { cliPolicy } from '../sqlInput';

export const undoCommand: CliCommand = {
  name: 'undo',
  summary: 'propose the way back from an executed ticket (held for approval like any write)',
  usage: 'pg-agent undo <ticket> [flags]',
  options: {},
  description:
    'Destructive DDL approved with a recovery window left what it destroyed in the quarantine (a dropped table,\n' +
    "a dropped column's values, a truncated table's rows): undo proposes the SQL that puts it back. A data change\n" +
    'has its undo script. Either way you get a held ticket with its impact: approve it, then `pg-agent exec --ticket`.',
  async run(context) {
    const { args } = context;
    const [id, ...extra] = args.positionals;
    if (!id || extra.length > 0)
      throw new AgentError(
        'BAD_INPUT',
        'undo takes exactly one ticket id.',
        'Find it with `pg-agent approvals list --status EXECUTED`.',
      );
    // The way back goes to the database the ticket ran on (as exec does), unless --db or --connection say otherwise.
    const store = await context.openTicketStore();
    const ran = await store.get(id);
    if (ran) context.useTicketDatabase(ran.connection);
    const { settings, warnings } = await cliPolicy(context);
    const proposal = await proposeUndo(await context.openDb(), store, id, {
      connection: await context.connectionKey(),
      requestedBy: await requesterOf(context),
      settings,
      logger: context.logger,
    });
    await saveImpactReport(workspacePaths(args.flags.workspace).impact, proposal.ticket);
    printHeldProposal(context, proposal, warnings, `The way back from ticket ${id} (from its ${proposal.source})`);
    return EXIT.held;
  },
};
