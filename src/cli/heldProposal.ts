/** How `undo` and `quarantine purge` show the write they propose: its SQL, impact and held ticket (as `sql` does). */
import { renderImpact } from '../core/present/renderImpact';
import { statementsJson, ticketSummary } from '../core/present/outputJson';
import { shownStatement } from '../core/present/shownSql';
import { classifySql } from '../core/sql/classify';
import type { HeldProposal } from '../core/sql/recovery/undoProposal';
import type { PolicyWarning } from '../core/settings/workspacePolicy';
import { visibleText } from '../shared/visibleSql';
import type { CommandContext } from './command';
import { withPolicyWarnings } from './sqlInput';

export function printHeldProposal(
  context: CommandContext,
  proposal: HeldProposal,
  warnings: readonly PolicyWarning[],
  title: string,
): void {
  const { io, args } = context;
  const { ticket, impact } = proposal;
  if (args.flags.json) {
    const held = {
      status: 'held',
      statements: statementsJson(classifySql(ticket.sql)),
      fields: [],
      rows: [],
      rowCount: 0,
      truncated: false,
      impact: withPolicyWarnings(impact, warnings),
      ticket: ticketSummary(ticket),
    };
    io.stdout(`${JSON.stringify(held)}\n`);
    return;
  }
  io.stdout(
    `${visibleText(title)}:\n\n${shownStatement(ticket.sql).text}\n\n${renderImpact(impact)}\n\nHeld for approval: ticket ${ticket.id} (expires ${ticket.expiresAt}).\n`,
  );
  io.stdout(
    `  approve: pg-agent approvals approve ${ticket.id} --comment "…"\n  run:     pg-agent exec --ticket ${ticket.id}\n`,
  );
}
